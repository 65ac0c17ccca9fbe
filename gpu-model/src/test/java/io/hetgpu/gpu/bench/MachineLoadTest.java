package io.hetgpu.gpu.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.bench.MachineLoad.CpuTicks;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MachineLoadTest {

    @Test
    void countsEveryStateUpToStealAndLeavesGuestTimeOut() {
        // user nice system idle iowait irq softirq steal guest guest_nice: guest is already inside user.
        var ticks = CpuTicks.parse("cpu  400 10 100 1400 20 0 30 40 500 7");

        assertThat(ticks).isEqualTo(new CpuTicks(2000, 40));
    }

    @Test
    void theStealOfAnIntervalIsItsShareOfTheTicksThatPassed() {
        var start = new CpuTicks(10_000, 300);
        var end = new CpuTicks(12_000, 500);

        assertThat(end.stealShareSince(start)).isEqualTo(0.1);
        assertThat(start.stealShareSince(start)).as("no tick passed").isZero();
    }

    @Test
    void aLineThatIsNotTheMachinesCpuLineGivesNoTicks() {
        assertThat(CpuTicks.parse("cpu0 400 10 100 1400 20 0 30 40 0 0")).as("one CPU's line").isNull();
        assertThat(CpuTicks.parse("cpu  400 10 100 1400 20 0 30")).as("a kernel without steal").isNull();
    }

    @Test
    void namesTheProcessorAndItsClockFromTheFirstCpusEntry(@TempDir Path dir) throws Exception {
        var cpuinfo = Files.writeString(dir.resolve("cpuinfo"), """
                processor	: 0
                vendor_id	: AuthenticAMD
                model name	: AMD EPYC
                cpu MHz		: 2596.120

                processor	: 1
                model name	: AMD EPYC
                cpu MHz		: 1800.000
                """);

        assertThat(MachineLoad.processor(cpuinfo, 2)).isEqualTo("AMD EPYC, 2 CPUs at 2596 MHz");
        assertThat(MachineLoad.processor(dir.resolve("absent"), 1)).isEqualTo("?, 1 CPU");
    }

    @Test
    void readsTheFirstLineOfTheFile(@TempDir Path dir) throws Exception {
        var stat = Files.writeString(dir.resolve("stat"), "cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8 9 10\nintr 5\n");

        assertThat(CpuTicks.read(stat)).isEqualTo(new CpuTicks(36, 8));
        assertThat(CpuTicks.read(dir.resolve("absent"))).as("off Linux").isNull();
    }
}
