package io.hetgpu.gpu.discovery;

import io.hetgpu.gpu.DeviceHealth;
import java.util.Objects;

/**
 * A device became healthy or unhealthy.
 *
 * @param uuid   the device
 * @param health its new health
 * @param reason why, for logs and events: {@code XID 79 (GPU has fallen off the bus)}, {@code answered normally for 60 s}
 */
public record HealthChange(String uuid, DeviceHealth health, String reason) {

    public HealthChange {
        Objects.requireNonNull(uuid, "uuid");
        Objects.requireNonNull(health, "health");
        Objects.requireNonNull(reason, "reason");
    }
}
