package io.hetgpu.testcluster.shipped;

import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A stand-in for the NVIDIA driver's {@code libnvidia-ml.so.1}, built from {@code nvml/src/test/native/fake-nvml-470.c}:
 * one K80 board (two GPUs) behind the 470 branch's functions. What the NVIDIA container runtime does for the plugin's pod
 * (mount the driver's libraries where the loader finds them) is done with {@code LD_LIBRARY_PATH}. A test that needs it
 * is skipped, saying why, where there is no C compiler.
 */
final class StandInDriver {

    static final String SOURCE = "nvml/src/test/native/fake-nvml-470.c";

    private StandInDriver() {
    }

    /** Builds the library into {@code dir} and returns the folder to put on {@code LD_LIBRARY_PATH}. */
    static Path build(Path checkout, Path dir) throws IOException, InterruptedException {
        var library = dir.resolve("libnvidia-ml.so.1");
        Process gcc;
        try {
            gcc = new ProcessBuilder("gcc", "-shared", "-fPIC", "-Wl,-soname,libnvidia-ml.so.1", "-o", library.toString(),
                    checkout.resolve(SOURCE).toString()).redirectErrorStream(true).start();
        } catch (IOException e) {
            assumeThat(false).as("no C compiler (gcc) here to build the stand-in NVIDIA driver: %s", e.getMessage()).isTrue();
            throw e;
        }
        if (!gcc.waitFor(60, TimeUnit.SECONDS)) {
            gcc.destroyForcibly();
            throw new AssertionError("gcc still building " + SOURCE + " after 60 s");
        }
        var output = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (gcc.exitValue() != 0) {
            throw new AssertionError("gcc could not build " + SOURCE + ": " + output);
        }
        return dir;
    }
}
