package io.hetgpu.extender.trust;

import io.hetgpu.gpu.inventory.DeviceAssignment;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The secret the extender signs its {@code hetgpu.io/gpu-devices} records with (HMAC-SHA256), so that it trusts only the
 * records an extender sharing the key wrote. Replicas share it through one Secret ({@link RecordKeySecret}).
 */
public final class RecordKey {

    /** The size of a new key, and the least a key read from a Secret may have. */
    public static final int BYTES = 32;
    private static final String ALGORITHM = "HmacSHA256";
    /** Leads the signed bytes, so that a signature made for anything else never passes for a record's. */
    private static final byte[] PURPOSE = "hetgpu.io/gpu-devices v1".getBytes(StandardCharsets.UTF_8);

    private final SecretKeySpec secret;

    private RecordKey(byte[] bytes) {
        this.secret = new SecretKeySpec(bytes, ALGORITHM);
    }

    /** A key of these bytes; {@link IllegalArgumentException} naming the size when there are fewer than {@link #BYTES}. */
    public static RecordKey of(byte[] bytes) {
        if (bytes.length < BYTES) {
            throw new IllegalArgumentException("expected a key of at least " + BYTES + " bytes, got " + bytes.length);
        }
        return new RecordKey(bytes.clone());
    }

    /** A new key of {@link #BYTES} random bytes. */
    public static RecordKey random(SecureRandom random) {
        var bytes = new byte[BYTES];
        random.nextBytes(bytes);
        return new RecordKey(bytes);
    }

    /** The key's bytes, to store it. */
    public byte[] bytes() {
        return secret.getEncoded();
    }

    /** The signature of the record for the pod of UID {@code podUid}: base64url, without padding. */
    public String sign(DeviceAssignment record, String podUid) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(mac(canonical(record, podUid)));
    }

    /** Whether the record carries this key's signature for the pod of UID {@code podUid}. */
    public boolean signed(DeviceAssignment record, String podUid) {
        byte[] given;
        try {
            given = Base64.getUrlDecoder().decode(record.signature());
        } catch (IllegalArgumentException e) {
            return false;
        }
        // Compared in constant time: how long a refusal takes says nothing of how much of a forgery was right.
        return MessageDigest.isEqual(given, mac(canonical(record, podUid)));
    }

    /**
     * The bytes signed: node, pod UID, bind time and devices in order, each prefixed with its length, so that no two
     * different records (a device ID holding a separator, say) give the same bytes.
     */
    static byte[] canonical(DeviceAssignment record, String podUid) {
        var out = new ByteArrayOutputStream();
        out.writeBytes(PURPOSE);
        field(out, record.node());
        field(out, podUid);
        field(out, record.boundAt().toString());
        out.writeBytes(ByteBuffer.allocate(Integer.BYTES).putInt(record.devices().size()).array());
        record.devices().forEach(device -> field(out, device));
        return out.toByteArray();
    }

    private static void field(ByteArrayOutputStream out, String value) {
        var bytes = value.getBytes(StandardCharsets.UTF_8);
        out.writeBytes(ByteBuffer.allocate(Integer.BYTES).putInt(bytes.length).array());
        out.writeBytes(bytes);
    }

    private byte[] mac(byte[] message) {
        try {
            var mac = Mac.getInstance(ALGORITHM);
            mac.init(secret);
            return mac.doFinal(message);
        } catch (GeneralSecurityException e) {
            // Every Java runtime has HmacSHA256, and any key of bytes fits it.
            throw new IllegalStateException(ALGORITHM + " unavailable", e);
        }
    }

    @Override
    public String toString() {
        return "RecordKey[" + BYTES + " bytes, not shown]";
    }
}
