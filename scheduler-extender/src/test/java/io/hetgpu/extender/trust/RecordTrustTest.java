package io.hetgpu.extender.trust;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.inventory.DeviceAssignment;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The rule a record is judged by, one case at a time. */
class RecordTrustTest {

    private static final Instant NOW = Instant.parse("2026-11-28T12:00:00Z");
    private static final Set<String> SCHEDULERS = Set.of("hetgpu-scheduler");
    private static final RecordKey KEY = key((byte) 1);
    private static final RecordTrust.RecordedPod PENDING = new RecordTrust.RecordedPod("uid-a", "", 2, "hetgpu-scheduler", false);

    private static RecordKey key(byte fill) {
        var bytes = new byte[RecordKey.BYTES];
        Arrays.fill(bytes, fill);
        return RecordKey.of(bytes);
    }

    private static DeviceAssignment signed(DeviceAssignment record, String uid) {
        return record.signed(KEY.sign(record, uid));
    }

    private static RecordTrust.Verdict judge(DeviceAssignment record, RecordTrust.RecordedPod pod) {
        return RecordTrust.judge(record, pod, NOW, SCHEDULERS, KEY);
    }

    private static Distrust reason(RecordTrust.Verdict verdict) {
        return verdict instanceof RecordTrust.Untrusted untrusted ? untrusted.reason() : null;
    }

    private final DeviceAssignment record = new DeviceAssignment("n1", List.of("GPU-a", "GPU-b"), NOW.minusSeconds(1));

    @Test
    void trustsTheRecordTheKeySignedForThePod() {
        assertThat(judge(signed(record, "uid-a"), PENDING)).isInstanceOf(RecordTrust.Trusted.class);
        assertThat(judge(signed(record, "uid-a"), new RecordTrust.RecordedPod("uid-a", "n1", 2, "other", true)))
                .as("a bound pod: its scheduler and gates no longer matter").isInstanceOf(RecordTrust.Trusted.class);
    }

    @Test
    void refusesWhatTheKeyDidNotSign() {
        assertThat(reason(judge(record, PENDING))).isEqualTo(Distrust.UNSIGNED);
        assertThat(reason(judge(record.signed(key((byte) 2).sign(record, "uid-a")), PENDING))).isEqualTo(Distrust.BAD_SIGNATURE);
        assertThat(reason(judge(signed(record, "uid-b"), PENDING))).as("signed for another pod").isEqualTo(Distrust.BAD_SIGNATURE);
        assertThat(reason(judge(record.signed("not base64!"), PENDING))).isEqualTo(Distrust.BAD_SIGNATURE);
        var reordered = new DeviceAssignment("n1", List.of("GPU-b", "GPU-a"), record.boundAt(), KEY.sign(record, "uid-a"));
        assertThat(reason(judge(reordered, PENDING))).as("the devices' order is signed").isEqualTo(Distrust.BAD_SIGNATURE);
        var joined = new DeviceAssignment("n1", List.of("GPU-aGPU-b"), record.boundAt());
        assertThat(KEY.sign(joined, "uid-a")).as("fields cannot run into each other").isNotEqualTo(KEY.sign(record, "uid-a"));
    }

    @Test
    void refusesASignedRecordThatDoesNotFitThePod() {
        assertThat(reason(judge(signed(record, "uid-a"), new RecordTrust.RecordedPod("uid-a", "n2", 2, "hetgpu-scheduler", false))))
                .isEqualTo(Distrust.OTHER_NODE);
        assertThat(reason(judge(signed(record, "uid-a"), new RecordTrust.RecordedPod("uid-a", "", 1, "hetgpu-scheduler", false))))
                .isEqualTo(Distrust.TOO_MANY_DEVICES);
        assertThat(reason(judge(signed(record, "uid-a"), new RecordTrust.RecordedPod("uid-a", "", 2, "nobody", false))))
                .isEqualTo(Distrust.NOT_SCHEDULABLE);
        assertThat(reason(judge(signed(record, "uid-a"), new RecordTrust.RecordedPod("uid-a", "", 2, "hetgpu-scheduler", true))))
                .isEqualTo(Distrust.NOT_SCHEDULABLE);
    }

    @Test
    void allowsClockSkewButNoRecordFromTheFuture() {
        var skewed = new DeviceAssignment("n1", record.devices(), NOW.plus(RecordTrust.CLOCK_SKEW));
        assertThat(judge(signed(skewed, "uid-a"), PENDING)).isInstanceOf(RecordTrust.Trusted.class);
        var later = new DeviceAssignment("n1", record.devices(), NOW.plus(RecordTrust.CLOCK_SKEW).plus(Duration.ofMillis(1)));
        assertThat(reason(judge(signed(later, "uid-a"), PENDING))).isEqualTo(Distrust.FUTURE);
    }

    @Test
    void logsAndCountsEachPodOnceWithinABoundedMemory() {
        var refusals = new UntrustedRecords(2);
        refusals.refused("a", "ml", "a", Distrust.UNSIGNED, "no sig");
        refusals.refused("a", "ml", "a", Distrust.UNSIGNED, "no sig");
        assertThat(refusals.count(Distrust.UNSIGNED)).isEqualTo(1);
        refusals.refused("a", "ml", "a", Distrust.FUTURE, "later");
        assertThat(refusals.count(Distrust.FUTURE)).as("a new reason for the same pod").isEqualTo(1);
        refusals.refused("b", "ml", "b", Distrust.UNSIGNED, "no sig");
        refusals.refused("c", "ml", "c", Distrust.UNSIGNED, "no sig");
        refusals.refused("a", "ml", "a", Distrust.FUTURE, "later");
        assertThat(refusals.count(Distrust.FUTURE)).as("pod a forgotten after two others: said again").isEqualTo(2);
    }
}
