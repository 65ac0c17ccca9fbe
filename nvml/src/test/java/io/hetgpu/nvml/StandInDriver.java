package io.hetgpu.nvml;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A stand-in for the NVIDIA driver's {@code libnvidia-ml.so.1}, built with {@code gcc} from {@link #SOURCE}: one K80
 * board (two GPUs) behind the 470 branch's functions. What the NVIDIA container runtime does for the plugin's pod
 * (mount the driver's libraries where the loader finds them) is done by putting its folder on {@code LD_LIBRARY_PATH}.
 * For measuring and testing the NVML path, the JavaCPP bindings included, on a machine without a GPU.
 */
public final class StandInDriver {

    /** The stand-in's source, relative to the checkout. */
    public static final String SOURCE = "nvml/src/test/native/fake-nvml-470.c";

    /** There is no C compiler here to build the stand-in with. */
    public static final class NoCompiler extends IOException {
        NoCompiler(IOException cause) {
            super("no C compiler (gcc) here to build the stand-in NVIDIA driver: " + cause.getMessage(), cause);
        }
    }

    private StandInDriver() {
    }

    /** Builds the library into {@code dir} and returns the folder to put on {@code LD_LIBRARY_PATH}. */
    public static Path build(Path checkout, Path dir) throws IOException, InterruptedException {
        var source = checkout.resolve(SOURCE);
        Process gcc;
        try {
            gcc = new ProcessBuilder("gcc", "-shared", "-fPIC", "-Wl,-soname,libnvidia-ml.so.1", "-o",
                    dir.resolve("libnvidia-ml.so.1").toString(), source.toString()).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new NoCompiler(e);
        }
        if (!gcc.waitFor(60, TimeUnit.SECONDS)) {
            gcc.destroyForcibly();
            throw new IOException("gcc still building " + source + " after 60 s");
        }
        var output = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (gcc.exitValue() != 0) {
            throw new IOException("gcc could not build the stand-in NVIDIA driver from " + source + ": " + output);
        }
        return dir;
    }
}
