package io.hetgpu.nvml;

/**
 * An NVML call returned an error. Carries the function and NVML's own description, so logs read
 * {@code nvmlDeviceGetUUID failed: GPU is lost (NVML error 15)}.
 */
public final class NvmlException extends RuntimeException {

    private final String function;
    private final int code;

    public NvmlException(String function, int code, String description) {
        super(function + " failed: " + description + " (NVML error " + code + ")");
        this.function = function;
        this.code = code;
    }

    public String function() {
        return function;
    }

    public int code() {
        return code;
    }
}
