package io.hetgpu.deviceplugin;

import static org.junit.jupiter.api.Assumptions.abort;

import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.discovery.GpuSource;
import io.hetgpu.nvml.NvmlGpuSource;
import io.hetgpu.nvml.NvmlOptions;

/** This machine's GPUs through NVML, for the tests that run on a GPU node and are skipped elsewhere, saying why. */
public final class ThisMachinesGpus {

    private ThisMachinesGpus() {
    }

    /** NVML opened with the defaults the plugin ships; the calling test is skipped where it cannot open. */
    public static GpuSource nvmlOrSkip() {
        try {
            return NvmlGpuSource.open(NvmlOptions.defaults());
        } catch (GpuDiscoveryException e) {
            return abort("no usable NVML here: " + e.getMessage());
        }
    }
}
