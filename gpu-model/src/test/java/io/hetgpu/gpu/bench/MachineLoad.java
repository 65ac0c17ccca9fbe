package io.hetgpu.gpu.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What the machine was doing while a figure was taken, printed beside it: the one-minute load average (other work
 * sharing the cores) and the share of the machine's CPU time its hypervisor gave elsewhere while the figure's own
 * interval ran (steal). On a virtual machine the second moves from day to day and from minute to minute, and a tail
 * taken while a tenth of the CPU was stolen is not the same figure as one taken on an idle host.
 */
public final class MachineLoad {

    private MachineLoad() {
    }

    /**
     * "AMD EPYC, 2 CPUs at 2596 MHz": the host's processor as the guest sees it, printed once at the top of a
     * benchmark's output. The same machine kind has run on different hosts from one day to the next, the same Go floor
     * taking up to twice as long, so milliseconds from two days compare only beside this line.
     */
    public static String processor() {
        return processor(Path.of("/proc/cpuinfo"), Runtime.getRuntime().availableProcessors());
    }

    static String processor(Path cpuinfo, int cpus) {
        String model = "?";
        String mhz = null;
        try (var lines = Files.lines(cpuinfo)) {
            for (var line : (Iterable<String>) lines::iterator) {
                int colon = line.indexOf(':');
                if (colon < 0) {
                    continue;
                }
                var key = line.substring(0, colon).trim();
                if (key.equals("model name") && model.equals("?")) {
                    model = line.substring(colon + 1).trim();
                } else if (key.equals("cpu MHz") && mhz == null) {
                    mhz = line.substring(colon + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // Not Linux: the model stays unknown.
        }
        var text = model + ", " + cpus + (cpus == 1 ? " CPU" : " CPUs");
        return mhz == null ? text : text + " at " + Math.round(Double.parseDouble(mhz)) + " MHz";
    }

    /** "0.42", or "?" where /proc/loadavg cannot be read (not Linux). */
    public static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    /** The start of an interval, to print the steal of by {@link Interval#steal()} once it ends. */
    public static Interval start() {
        return new Interval(CpuTicks.read(Path.of("/proc/stat")));
    }

    /** An interval's start. */
    public record Interval(CpuTicks start) {

        /** "0.4%": the stolen share of every CPU's time since the start; "?" where /proc/stat cannot be read. */
        public String steal() {
            var end = CpuTicks.read(Path.of("/proc/stat"));
            return start == null || end == null ? "?" : String.format("%.1f%%", 100 * end.stealShareSince(start));
        }
    }

    /**
     * The first line of /proc/stat, all CPUs' time in clock ticks: {@code total} of every state it lists, of which
     * {@code steal} (the eighth value) ran other guests while this one had work.
     */
    public record CpuTicks(long total, long steal) {

        /** The line's ticks; null where the file cannot be read or the line is not the kernel's "cpu" line. */
        static CpuTicks read(Path stat) {
            try (var lines = Files.lines(stat)) {
                return lines.findFirst().map(CpuTicks::parse).orElse(null);
            } catch (IOException | RuntimeException e) {
                return null;
            }
        }

        /**
         * "cpu  user nice system idle iowait irq softirq steal guest guest_nice"; guest time is already counted in
         * user, so the total stops at steal. Kernels before 2.6.11 had no steal column: null.
         */
        static CpuTicks parse(String line) {
            var fields = line.trim().split("\\s+");
            if (!fields[0].equals("cpu") || fields.length < 9) {
                return null;
            }
            long total = 0;
            for (int i = 1; i <= 8; i++) {
                total += Long.parseLong(fields[i]);
            }
            return new CpuTicks(total, Long.parseLong(fields[8]));
        }

        /** The share of the ticks since {@code earlier} that were stolen, 0 when none passed. */
        double stealShareSince(CpuTicks earlier) {
            long ticks = total - earlier.total;
            return ticks <= 0 ? 0 : (double) (steal - earlier.steal) / ticks;
        }
    }
}
