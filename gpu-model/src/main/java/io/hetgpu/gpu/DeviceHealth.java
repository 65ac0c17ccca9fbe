package io.hetgpu.gpu;

import java.util.Locale;

/** What kubelet is told about a device: only healthy devices are handed to containers. */
public enum DeviceHealth {
    HEALTHY, UNHEALTHY;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static DeviceHealth fromLabel(String label) {
        for (var value : values()) {
            if (value.label().equals(label)) {
                return value;
            }
        }
        throw new IllegalArgumentException("unknown health " + Quote.of(label) + " (expected healthy or unhealthy)");
    }
}
