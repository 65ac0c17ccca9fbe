package io.hetgpu.testcluster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.gpu.profile.SimulatedGpuSource;
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
        assertThat(run("inventory", "--gpu-source", "simulated:k80-4x")).isZero();

        assertThat(out.toString())
                .contains("== simulated:k80-4x")
                .contains("driver 470.")
                .contains("Tesla K80").contains(" K80 ")
                .contains("BRD")
                .contains("NVLink islands: none")
                .doesNotContain("{\"schema\"");
    }

    @Test
    void jsonIsOnlyTheAnnotationAToolCanParse() throws Exception {
        assertThat(run("inventory", "--gpu-source", "simulated:k80-4x", "--json")).isZero();

        var inventory = new InventoryCodec().decode(out.toString().strip());
        assertThat(inventory.devices()).hasSize(8); // four K80 boards, two GPUs each
        assertThat(inventory.devices()).allSatisfy(device -> assertThat(device.model()).isEqualTo("K80"));
    }

    @Test
    void jsonOfEveryProfileIsOneObjectBySource() throws Exception {
        assertThat(run("inventory", "--json")).isZero();

        var all = new ObjectMapper().readTree(out.toString());
        var names = new java.util.ArrayList<String>();
        all.fieldNames().forEachRemaining(names::add);
        assertThat(names).containsExactlyElementsOf(SimulatedGpuSource.shippedProfiles().stream().map(p -> "simulated:" + p).toList());
        assertThat(new InventoryCodec().decode(all.get("simulated:dgx-a100").toString()).devices()).hasSize(8);
    }

    @Test
    void aBadArgumentIsOneLineNamingWhereHelpIs() {
        assertThat(run("demo", "--seed", "abc")).isEqualTo(2);

        assertThat(err.toString().strip()).isEqualTo("hetgpu: Invalid value for option '--seed': 'abc' is not a long (see hetgpu-test-cluster demo --help)");
    }

    @Test
    void helpNeverBreaksANameAtItsDot() {
        var usage = TestClusterMain.commandLine().getSubcommands().get("inventory").getUsageMessage();
        assertThat(usage).contains("hetgpu.io/gpu-inventory");
        assertThat(usage).doesNotContainPattern("[a-z0-9]\\.\\R\\s+[a-z0-9][-a-z0-9.]*/");
    }

    @Test
    void helpNamesTheCommandAsTheLauncherTypedIt() {
        System.setProperty("hetgpu.command", "./hetgpu cluster");
        try {
            assertThat(run("inventory", "--help")).isZero();
        } finally {
            System.clearProperty("hetgpu.command");
        }
        assertThat(out.toString()).startsWith("Usage: ./hetgpu cluster inventory ");
    }

    @Test
    void badSourceIsOneLineAndExitCodeOne() {
        assertThat(run("inventory", "--gpu-source", "simulated:nope")).isEqualTo(1);

        assertThat(err.toString().lines().toList()).hasSize(1);
        assertThat(err.toString()).startsWith("hetgpu: ").contains("nope").doesNotContain("Exception");
    }
}
