package io.hetgpu.deviceplugin.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.regex.Pattern;

/**
 * A process's resident memory split by what holds it, read from {@code /proc/PID/smaps}: the plugin's memory target is
 * judged on the total, and the split says where a change would have to come from (on a GPU node, how much of it is
 * the driver's NVML and how much JavaCPP's bindings, which no simulated run can show).
 *
 * @param kib resident KiB per holder; every holder is present, zero where nothing is mapped
 */
record ResidentMemory(Map<Holder, Long> kib) {

    /** What a mapping belongs to, judged from its path. */
    enum Holder {
        ANONYMOUS("anonymous (Java heap, metaspace, thread stacks, malloc)"),
        AOT_CACHE("AOT cache"),
        LIBJVM("libjvm.so"),
        JDK_ARCHIVE("the JDK's class data archive"),
        JDK_FILES("other JDK files"),
        NVIDIA_DRIVER("NVIDIA driver (libnvidia-*, /dev/nvidia*)"),
        JAVACPP("JavaCPP and its NVML bindings"),
        OTHER_FILES("other files");

        private final String label;

        Holder(String label) {
            this.label = label;
        }
    }

    private static final Pattern MAPPING = Pattern.compile("^[0-9a-f]+-[0-9a-f]+ \\S+ \\S+ \\S+ \\S+\\s*(.*)$");
    private static final Pattern RSS = Pattern.compile("^Rss:\\s+(\\d+) kB$");

    ResidentMemory {
        kib = Map.copyOf(kib);
    }

    static ResidentMemory of(long pid, Path aotCache, Path javaHome) throws IOException {
        return parse(Files.readAllLines(Path.of("/proc", Long.toString(pid), "smaps")), aotCache, javaHome);
    }

    /**
     * @param aotCache the cache the JVM was started with, or null
     * @param javaHome the home of the JVM that runs the process
     */
    static ResidentMemory parse(List<String> smaps, Path aotCache, Path javaHome) {
        var kib = new EnumMap<Holder, Long>(Holder.class);
        for (var holder : Holder.values()) {
            kib.put(holder, 0L);
        }
        var current = Holder.ANONYMOUS;
        for (var line : smaps) {
            var mapping = MAPPING.matcher(line);
            if (mapping.matches()) {
                current = holderOf(mapping.group(1).strip(), aotCache, javaHome);
                continue;
            }
            var rss = RSS.matcher(line);
            if (rss.matches()) {
                kib.merge(current, Long.parseLong(rss.group(1)), Long::sum);
            }
        }
        return new ResidentMemory(kib);
    }

    private static Holder holderOf(String path, Path aotCache, Path javaHome) {
        if (path.isEmpty() || path.startsWith("[")) {
            return Holder.ANONYMOUS; // [heap], [stack], [anon:…]; [vdso] and [vvar] are a few pages
        }
        if (aotCache != null && path.equals(aotCache.toString())) {
            return Holder.AOT_CACHE;
        }
        var name = path.substring(path.lastIndexOf('/') + 1);
        if (name.startsWith("libnvidia-") || path.startsWith("/dev/nvidia")) {
            return Holder.NVIDIA_DRIVER;
        }
        if (name.startsWith("libjnijavacpp") || name.startsWith("libjninvml")) {
            return Holder.JAVACPP;
        }
        if (path.startsWith(javaHome.toString() + "/")) {
            if (name.equals("libjvm.so")) {
                return Holder.LIBJVM;
            }
            // classes.jsa, or classes_nocoops.jsa and the like: what the JVM maps when no cache of the plugin's own is given.
            return name.startsWith("classes") && name.endsWith(".jsa") ? Holder.JDK_ARCHIVE : Holder.JDK_FILES;
        }
        return Holder.OTHER_FILES;
    }

    double totalMiB() {
        return kib.values().stream().mapToLong(Long::longValue).sum() / 1024.0;
    }

    double mib(Holder holder) {
        return kib.get(holder) / 1024.0;
    }

    /** Each holder with any resident memory, largest first, in MiB to a tenth. */
    @Override
    public String toString() {
        var parts = new StringJoiner(", ");
        kib.entrySet().stream().filter(entry -> entry.getValue() > 0)
                .sorted(Map.Entry.<Holder, Long>comparingByValue().reversed())
                .forEach(entry -> parts.add(String.format("%s %.1f", entry.getKey().label, entry.getValue() / 1024.0)));
        return parts.toString();
    }
}
