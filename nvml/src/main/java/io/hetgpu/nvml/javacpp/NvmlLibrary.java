package io.hetgpu.nvml.javacpp;

import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import java.io.File;
import java.io.IOException;
import org.bytedeco.javacpp.Loader;

/**
 * Loads exactly two native files from the class path: JavaCPP's own {@code libjnijavacpp.so} and the NVML
 * bindings {@code libjninvml.so}, whose only dependency outside libc/libstdc++ is the driver's
 * {@code libnvidia-ml.so.1}.
 *
 * <p>JavaCPP's normal loader would not do: the NVML preset inherits from the CUDA runtime preset, so
 * {@code Loader.load(nvml.class)} also initialises {@code global.cudart} and tries to load
 * {@code libcudart} and {@code libcuda}, which a device-plugin container does not have. Setting
 * {@code org.bytedeco.javacpp.loadLibraries=false} turns every {@code Loader.load()} in the JVM into a
 * no-op (the switch JavaCPP's own Builder uses), so the static initialisers of the NVML classes run
 * without loading anything, and the natives they need are already bound from the two files loaded here.
 * The switch is process-wide and stays set: the device plugin uses JavaCPP for NVML only.
 */
final class NvmlLibrary {

    static final String NVML_SONAME = "libnvidia-ml.so.1";
    static final String NOT_LOADABLE = "NVML is not available on this node: " + NVML_SONAME
            + " could not be loaded (is the NVIDIA driver installed and the device plugin run with the driver's libraries mounted?)";

    private NvmlLibrary() {
    }

    static void load() throws GpuDiscoveryException {
        System.setProperty("org.bytedeco.javacpp.loadLibraries", "false");
        var platform = Loader.getPlatform();
        var javacpp = extract("/org/bytedeco/javacpp/" + platform + "/" + System.mapLibraryName("jnijavacpp"), platform);
        var nvml = extract("/org/bytedeco/cuda/" + platform + "/" + System.mapLibraryName("jninvml"), platform);
        try {
            System.load(javacpp.getPath());
        } catch (UnsatisfiedLinkError e) {
            throw new GpuDiscoveryException("NVML is not available on this node: JavaCPP's native library could not be loaded ("
                    + e.getMessage() + ").");
        }
        try {
            System.load(nvml.getPath());
        } catch (UnsatisfiedLinkError e) {
            var reason = String.valueOf(e.getMessage());
            if (reason.contains("libnvidia-ml")) {
                throw new GpuDiscoveryException(NOT_LOADABLE);
            }
            throw new GpuDiscoveryException("NVML is not available on this node: the NVML bindings could not be loaded ("
                    + reason + ").");
        }
    }

    /** JavaCPP's cache keeps one extracted copy per jar version, in ~/.javacpp/cache or {@code org.bytedeco.javacpp.cachedir}. */
    private static File extract(String resource, String platform) throws GpuDiscoveryException {
        if (NvmlLibrary.class.getResource(resource) == null) {
            throw new GpuDiscoveryException("NVML is not available on this node: hetgpu carries NVML bindings for linux-x86_64 only ("
                    + resource + " is not on the class path, platform " + platform + ").");
        }
        try {
            return Loader.cacheResource(NvmlLibrary.class, resource);
        } catch (IOException e) {
            throw new GpuDiscoveryException("NVML is not available on this node: " + resource + " could not be extracted to JavaCPP's cache ("
                    + e.getMessage() + "; set -Dorg.bytedeco.javacpp.cachedir to a writable folder).");
        }
    }
}
