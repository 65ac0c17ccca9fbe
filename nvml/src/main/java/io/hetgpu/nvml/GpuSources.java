package io.hetgpu.nvml;

import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.discovery.GpuSource;
import io.hetgpu.gpu.profile.SimulatedGpuSource;

/**
 * Opens the GPU source an admin names with {@code --gpu-source}: {@code nvml} for the real GPUs, or
 * {@code simulated:<profile>} (a shipped profile name or a profile file) for a node without them.
 * Simulation is only ever chosen this way, never as a fallback when NVML is missing.
 */
public final class GpuSources {

    public static final String NVML = "nvml";
    public static final String SIMULATED_PREFIX = "simulated:";

    private GpuSources() {
    }

    public static GpuSource open(String spec, String nodeName, NvmlOptions nvmlOptions) throws GpuDiscoveryException {
        checkSpec(spec);
        return NVML.equals(spec) ? NvmlGpuSource.open(nvmlOptions) : SimulatedGpuSource.open(spec.substring(SIMULATED_PREFIX.length()), nodeName);
    }

    /** Checks the spelling of a source without opening it, so that a command line can be checked whole before anything starts. */
    public static void checkSpec(String spec) throws GpuDiscoveryException {
        boolean simulated = spec != null && spec.startsWith(SIMULATED_PREFIX) && spec.length() > SIMULATED_PREFIX.length();
        if (!NVML.equals(spec) && !simulated) {
            throw new GpuDiscoveryException("--gpu-source must be \"nvml\" or \"simulated:<profile>\" (profiles: "
                    + String.join(", ", SimulatedGpuSource.shippedProfiles()) + "), got \"" + spec + "\"");
        }
    }
}
