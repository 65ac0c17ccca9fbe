package io.hetgpu.testcluster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class InventoryCommandTest {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        var commandLine = TestClusterMain.commandLine();
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        return commandLine.execute(args);
    }

    @Test
    void printsDevicesLinksAndIslandsOfAProfile() {
        assertThat(run("inventory", "--gpu-source", "simulated:k80-4x", "--json")).isZero();

        assertThat(out.toString())
                .contains("== simulated:k80-4x")
                .contains("driver 470.")
                .contains("Tesla K80").contains(" K80 ")
                .contains("BRD")
                .contains("NVLink islands: none")
                .contains("{\"schema\":1,");
    }

    @Test
    void badSourceIsOneLineAndExitCodeOne() {
        assertThat(run("inventory", "--gpu-source", "simulated:nope")).isEqualTo(1);

        assertThat(err.toString().lines().toList()).hasSize(1);
        assertThat(err.toString()).startsWith("hetgpu: ").contains("nope").doesNotContain("Exception");
    }
}
