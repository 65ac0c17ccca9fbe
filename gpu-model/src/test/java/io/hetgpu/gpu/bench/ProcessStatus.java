package io.hetgpu.gpu.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;

/** A process's {@code /proc/PID/status} as read once: the sizes the benchmarks print (VmRSS, VmHWM, RssAnon, RssFile). */
public record ProcessStatus(List<String> lines) {

    private static final Pattern KIB = Pattern.compile("\\s*(\\d+) kB");

    public static ProcessStatus of(long pid) throws IOException {
        return new ProcessStatus(Files.readAllLines(Path.of("/proc", Long.toString(pid), "status")));
    }

    public static ProcessStatus self() throws IOException {
        return new ProcessStatus(Files.readAllLines(Path.of("/proc/self/status")));
    }

    /** The field's size in KiB ({@code field} without its colon, such as {@code "VmRSS"}). */
    public long kib(String field) {
        var prefix = field + ":";
        for (var line : lines) {
            if (line.startsWith(prefix)) {
                var size = KIB.matcher(line.substring(prefix.length()));
                if (size.matches()) {
                    return Long.parseLong(size.group(1));
                }
            }
        }
        throw new IllegalStateException("/proc/<pid>/status has no size " + field + " in kB");
    }

    /** The field's size in MiB: a target such as "under 96 MiB" is judged on it. */
    public double mib(String field) {
        return kib(field) / 1024.0;
    }
}
