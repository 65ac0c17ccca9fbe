package io.hetgpu.extender.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The machine's one-minute load average, printed beside each figure: a latency taken while other work shares the cores
 * is not the same figure, and a reader must be able to tell.
 */
final class LoadAverage {

    private LoadAverage() {
    }

    /** "0.42", or "?" where /proc/loadavg cannot be read (not Linux). */
    static String now() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }
}
