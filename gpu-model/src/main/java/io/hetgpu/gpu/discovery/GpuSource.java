package io.hetgpu.gpu.discovery;

import io.hetgpu.gpu.NodeTopology;
import java.util.function.Consumer;

/**
 * Where a node's GPUs come from: NVML on a real node ({@code hetgpu-nvml}), or a simulated profile
 * ({@link io.hetgpu.gpu.profile}). The topology is discovered once and cached; only health changes.
 */
public interface GpuSource extends AutoCloseable {

    /** A short description for logs: {@code nvml (driver 535.104.05)}, {@code simulated:dgx1-v100}. */
    String description();

    /** The node's devices and links, health as of now. */
    NodeTopology topology();

    /**
     * Delivers every health change from now on, on a thread of the source's own, until the returned
     * handle or the source is closed. The listener must not block.
     */
    AutoCloseable watchHealth(Consumer<HealthChange> listener);

    @Override
    void close();
}
