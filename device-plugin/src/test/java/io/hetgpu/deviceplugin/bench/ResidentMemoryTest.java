package io.hetgpu.deviceplugin.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.deviceplugin.bench.ResidentMemory.Holder;
import io.hetgpu.gpu.bench.ProcessStatus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

class ResidentMemoryTest {

    private static final Path CACHE = Path.of("/opt/hetgpu/hetgpu-device-plugin.aot");
    private static final Path JDK = Path.of("/opt/java/openjdk");

    @Test
    void eachMappingsResidentSizeGoesToWhatHoldsIt() {
        var memory = ResidentMemory.parse(smaps(
                mapping("ca000000-ca001000 ---p 00000000 00:00 0", 4),
                mapping("ca001000-cd02d000 rw-p 00001000 fe:00 2212539                    /opt/hetgpu/hetgpu-device-plugin.aot", 49_328),
                mapping("7f537e481000-7f537e4ff000 rw-p 0302d000 fe:00 2212539          /opt/hetgpu/hetgpu-device-plugin.aot", 504),
                mapping("55d0c0a00000-55d0c0b00000 rw-p 00000000 00:00 0                  [heap]", 716),
                mapping("7f5380000000-7f5380100000 rw-p 00000000 00:00 0                  [anon:glibc malloc]", 100),
                mapping("7f5381000000-7f5382000000 r-xp 00000000 fe:00 11                 /opt/java/openjdk/lib/server/libjvm.so", 15_192),
                mapping("7f5383000000-7f5383100000 r--s 00000000 fe:00 12                 /opt/java/openjdk/lib/modules", 2_432),
                mapping("7f5384000000-7f5384100000 r-xp 00000000 fe:00 13                 /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04", 3_000),
                mapping("7f5385000000-7f5385001000 rw-s 00000000 00:05 14                 /dev/nvidiactl", 4),
                mapping("7f5386000000-7f5386100000 r-xp 00000000 fe:00 15                 /tmp/javacpp/cuda-13.1-9.19-1.5.13-linux-x86_64.jar/org/bytedeco/cuda/linux-x86_64/libjninvml.so", 600),
                mapping("7f5387000000-7f5387100000 r-xp 00000000 fe:00 16                 /tmp/javacpp/javacpp-1.5.13-linux-x86_64.jar/org/bytedeco/javacpp/linux-x86_64/libjnijavacpp.so", 90),
                mapping("7f5388000000-7f5388100000 r-xp 00000000 fe:00 17                 /usr/lib/x86_64-linux-gnu/libc.so.6", 1_624),
                mapping("7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                  [stack]", 32)), CACHE, JDK);

        assertThat(memory.kib()).containsEntry(Holder.AOT_CACHE, 49_832L)
                .containsEntry(Holder.ANONYMOUS, 4L + 716 + 100 + 32)
                .containsEntry(Holder.LIBJVM, 15_192L)
                .containsEntry(Holder.JDK_FILES, 2_432L)
                .containsEntry(Holder.NVIDIA_DRIVER, 3_004L)
                .containsEntry(Holder.JAVACPP, 690L)
                .containsEntry(Holder.OTHER_FILES, 1_624L);
        assertThat(memory.totalMiB()).isEqualTo((49_832 + 852 + 15_192 + 2_432 + 3_004 + 690 + 1_624) / 1024.0);
        assertThat(memory.toString()).startsWith("AOT cache 48.7, libjvm.so 14.8, NVIDIA driver (libnvidia-*, /dev/nvidia*) 2.9,")
                .endsWith("JavaCPP and its NVML bindings 0.7");
    }

    @Test
    void withoutACacheTheJdksOwnArchiveIsNamedAndEmptyHoldersAreLeftOut() {
        var memory = ResidentMemory.parse(smaps(
                mapping("ca001000-cd02d000 rw-p 00001000 fe:00 2212539                    /opt/hetgpu/hetgpu-device-plugin.aot", 1_024),
                mapping("7f5381000000-7f5382000000 r-xp 00000000 fe:00 11                 /opt/java/openjdk/lib/server/libjvm.so", 2_048),
                mapping("800000000-800f00000 rw-p 00001000 fe:00 18                       /opt/java/openjdk/lib/server/classes_coh.jsa", 15_360)),
                null, JDK);

        assertThat(memory.kib()).containsEntry(Holder.AOT_CACHE, 0L).containsEntry(Holder.OTHER_FILES, 1_024L)
                .containsEntry(Holder.JDK_ARCHIVE, 15_360L).containsEntry(Holder.JDK_FILES, 0L);
        assertThat(memory.toString()).isEqualTo("the JDK's class data archive 15.0, libjvm.so 2.0, other files 1.0");
    }

    @Test
    @EnabledOnOs(value = OS.LINUX, disabledReason = "reads /proc/PID/smaps")
    void thisJvmsOwnMemoryAddsUpToWhatTheKernelReportsAsResident() throws IOException {
        var javaHome = Path.of(System.getProperty("java.home")).toRealPath();
        double before = ProcessStatus.self().mib("VmRSS");
        var memory = ResidentMemory.of(ProcessHandle.current().pid(), null, javaHome);
        double after = ProcessStatus.self().mib("VmRSS");

        // Read a moment apart, so a few MiB either way; a holder left out of the sum would be tens of MiB.
        assertThat(memory.totalMiB()).isBetween(Math.min(before, after) - 4, Math.max(before, after) + 4);
        assertThat(memory.mib(Holder.LIBJVM)).as("this JVM runs on libjvm.so").isPositive();
        assertThat(memory.mib(Holder.ANONYMOUS)).as("the Java heap is anonymous memory").isPositive();
    }

    @SafeVarargs
    private static List<String> smaps(List<String>... mappings) {
        var lines = new ArrayList<String>();
        for (var mapping : mappings) {
            lines.addAll(mapping);
        }
        return lines;
    }

    /** One mapping as the kernel writes it, with the fields around Rss that the parser must pass over. */
    private static List<String> mapping(String header, long rssKib) {
        return List.of(header, "Size:              " + rssKib + " kB", "KernelPageSize:        4 kB", "Rss:               " + rssKib + " kB",
                "Pss:               " + rssKib + " kB", "Private_Dirty:     " + rssKib + " kB", "Swap:                  0 kB", "THPeligible:           0",
                "VmFlags: rd wr mr mw me ac");
    }
}
