package io.hetgpu.gpu;

import java.util.Locale;

/** NVIDIA GPU architecture generation, derived from the compute capability's major (and minor) number. */
public enum GpuArchitecture {
    KEPLER, MAXWELL, PASCAL, VOLTA, TURING, AMPERE, ADA, HOPPER, BLACKWELL, UNKNOWN;

    public static GpuArchitecture of(ComputeCapability cc) {
        return switch (cc.major()) {
            case 3 -> KEPLER;
            case 5 -> MAXWELL;
            case 6 -> PASCAL;
            case 7 -> cc.minor() >= 5 ? TURING : VOLTA;
            case 8 -> cc.minor() >= 9 ? ADA : AMPERE;
            case 9 -> HOPPER;
            case 10, 11, 12 -> BLACKWELL;
            default -> UNKNOWN;
        };
    }

    /** The lower-case name used in labels and JSON ({@code hetgpu.io/gpu.family=volta}). */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static GpuArchitecture fromLabel(String label) {
        for (var value : values()) {
            if (value.label().equals(label)) {
                return value;
            }
        }
        throw new IllegalArgumentException("unknown GPU family " + Quote.of(label));
    }
}
