package io.hetgpu.nvml.javacpp;

import io.hetgpu.gpu.bench.ProcessStatus;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.nvml.NvmlGpuSource;
import io.hetgpu.nvml.NvmlOptions;
import java.io.IOException;
import org.bytedeco.cuda.global.nvml;

/**
 * What each step of opening NVML adds to this process's resident memory, from {@code /proc/self/status}: JavaCPP's
 * bindings loaded (with the driver's {@code libnvidia-ml.so.1} they link to, and the classes their {@code JNI_OnLoad}
 * loads), {@code nvmlInit}, then every device and link read and the health watcher started. The device plugin's memory
 * splits files from anonymous memory but cannot tell the driver's allocations from the JVM's; these steps can. Run it
 * with the DaemonSet's JVM options on a GPU machine, or on any machine with the stand-in driver on
 * {@code LD_LIBRARY_PATH}:
 *
 * <pre>
 *   java -Xint -XX:+UseSerialGC -Xmx64m --enable-native-access=ALL-UNNAMED \
 *       -cp device-plugin/target/hetgpu-device-plugin.jar:nvml/target/test-classes:gpu-model/target/test-classes \
 *       io.hetgpu.nvml.javacpp.NvmlMemorySteps
 * </pre>
 *
 * It takes no arguments. Not a test.
 */
public final class NvmlMemorySteps {

    private Resident last;

    public static void main(String[] args) throws IOException {
        if (args.length > 0) {
            System.err.println("NvmlMemorySteps takes no arguments, got " + String.join(" ", args));
            System.exit(2);
        }
        System.exit(new NvmlMemorySteps().run());
    }

    /** VmRSS, RssAnon and RssFile in KiB. */
    private record Resident(long total, long anonymous, long files) {

        static Resident now() throws IOException {
            var status = ProcessStatus.self();
            return new Resident(status.kib("VmRSS"), status.kib("RssAnon"), status.kib("RssFile"));
        }
    }

    private int run() throws IOException {
        last = Resident.now();
        System.out.printf("%-50s %8s %10s %8s  (MiB)%n", "step", "resident", "anonymous", "files");
        print("JVM started", last);
        try {
            NvmlLibrary.load();
            // The bindings' class (a thousand native methods) is loaded here, so that the next step is the driver's alone.
            Class.forName(nvml.class.getName());
        } catch (GpuDiscoveryException e) {
            System.err.println(e.getMessage());
            return 1;
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
        step("JavaCPP's bindings and libnvidia-ml loaded");
        int rc = nvml.nvmlInit_v2();
        if (rc != nvml.NVML_SUCCESS) {
            System.err.println("nvmlInit_v2 failed: NVML error " + rc);
            return 1;
        }
        step("nvmlInit_v2");
        try (var source = NvmlGpuSource.open(NvmlOptions.defaults())) {
            step("devices and links read, health watched (" + source.topology().size() + " GPUs)");
        } catch (GpuDiscoveryException e) {
            System.err.println(e.getMessage());
            return 1;
        }
        nvml.nvmlShutdown();
        return 0;
    }

    private void step(String name) throws IOException {
        var now = Resident.now();
        System.out.printf("%-50s %+8.1f %+10.1f %+8.1f%n", name, (now.total - last.total) / 1024.0,
                (now.anonymous - last.anonymous) / 1024.0, (now.files - last.files) / 1024.0);
        last = now;
    }

    private static void print(String name, Resident resident) {
        System.out.printf("%-50s %8.1f %10.1f %8.1f%n", name, resident.total / 1024.0, resident.anonymous / 1024.0, resident.files / 1024.0);
    }
}
