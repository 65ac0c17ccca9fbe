package io.hetgpu.extender;

import io.hetgpu.extender.trust.RecordKey;
import io.hetgpu.extender.trust.RecordTrust;
import io.hetgpu.extender.trust.UntrustedRecords;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import java.time.Clock;
import java.util.Arrays;
import java.util.Set;

/** A record key fixed for tests, and records signed with it as the bind verb signs them. */
public final class TestTrust {

    /** The tests' shared key: 32 bytes of 7. */
    public static final RecordKey KEY = key((byte) 7);

    private TestTrust() {
    }

    /** A key of 32 bytes of {@code fill}. */
    public static RecordKey key(byte fill) {
        var bytes = new byte[RecordKey.BYTES];
        Arrays.fill(bytes, fill);
        return RecordKey.of(bytes);
    }

    /** Trust by {@link #KEY}, for pods of hetgpu-scheduler and of the default scheduler (the tests' pods name either). */
    public static RecordTrust trust() {
        return new RecordTrust(KEY, Set.of("hetgpu-scheduler", "default-scheduler"), Clock.systemUTC(), new UntrustedRecords(UntrustedRecords.DEFAULT_MEMORY));
    }

    /** The annotation's text of {@code record} signed by {@link #KEY} for the pod of UID {@code podUid}. */
    public static String signed(DeviceAssignment record, String podUid) {
        return new DeviceAssignmentCodec().encode(record.signed(KEY.sign(record, podUid)));
    }
}
