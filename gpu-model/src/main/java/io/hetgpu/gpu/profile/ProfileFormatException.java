package io.hetgpu.gpu.profile;

/**
 * A machine profile cannot be used. The message names the file, the field path and the value found,
 * e.g. {@code dgx-a100.yaml: devices[3].memoryMiB: expected an integer >= 1, got "lots"}.
 */
public final class ProfileFormatException extends Exception {

    public ProfileFormatException(String message) {
        super(message);
    }
}
