package io.hetgpu.gpu.discovery;

/**
 * Discovery could not run (no driver, no GPU, an unreadable profile). The message is one sentence an
 * admin can act on; programs print it and exit, never a stack trace.
 */
public final class GpuDiscoveryException extends Exception {

    public GpuDiscoveryException(String message) {
        super(message);
    }

    public GpuDiscoveryException(String message, Throwable cause) {
        super(message, cause);
    }
}
