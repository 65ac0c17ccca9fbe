package io.hetgpu.deviceplugin;

import io.hetgpu.nvml.NvmlOptions;
import io.hetgpu.nvml.XidClass;
import io.hetgpu.nvml.XidSelection;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** Bad command lines end with one line naming the flag and the value, never a stack trace. */
class DevicePluginMainTest {

    @TempDir
    Path temp;

    @Test
    void rejectsAResourceNameKubeletWouldNotAccept() {
        assertThat(run("--resource-name", "gpu", "--publish-node-inventory", "false"))
                .isEqualTo("hetgpu-device-plugin: --resource-name: expected an extended resource name such as nvidia.com/gpu "
                        + "(a domain, '/', a name), got \"gpu\" (see --help)");
        assertThat(run("--resource-name", "kubernetes.io/gpu", "--publish-node-inventory", "false"))
                .as("the extender's rule, shared: no resource of Kubernetes' own domain")
                .contains("--resource-name: expected an extended resource name outside kubernetes.io");
    }

    @Test
    void rejectsMalformedValuesNamingTheOption() {
        assertThat(run("--http-port", "eighty")).startsWith("hetgpu-device-plugin: Invalid value for option '--http-port': 'eighty'");
        assertThat(run("--publish-node-inventory", "maybe")).contains("--publish-node-inventory").contains("maybe");
        assertThat(run("--device-list-strategy", "volume-mounts"))
                .contains("unknown device list strategy \"volume-mounts\"; expected one of envvar, cdi-cri");
        assertThat(run("--pod-resources-interval", "soon")).contains("expected a duration such as 5s");
        assertThat(run("--no-such-flag")).startsWith("hetgpu-device-plugin: Unknown option: '--no-such-flag'");
    }

    @Test
    void rejectsXidListsNamingTheFlagAndTheEntry() {
        assertThat(run("--health-skip-xids", "79,seventy-four")).isEqualTo("hetgpu-device-plugin: Invalid value for option "
                + "'--health-skip-xids': expected XID numbers separated by commas, or all; \"seventy-four\" is not an XID "
                + "(in \"79,seventy-four\") (see --help)");
        assertThat(run("--health-critical-xids", "-1")).startsWith("hetgpu-device-plugin: Invalid value for option '--health-critical-xids'")
                .contains("\"-1\" is not an XID");
    }

    @Test
    void healthFlagsDefaultToNvmlOptionsDefaults() {
        var main = new DevicePluginMain();
        new CommandLine(main).parseArgs("--device-plugin-dir", temp.toString());

        var options = main.nvmlOptions();
        var defaults = NvmlOptions.defaults();

        assertThat(options.xidRules()).isEqualTo(defaults.xidRules());
        assertThat(options.recoveryPeriod()).isEqualTo(defaults.recoveryPeriod());
        assertThat(options.probeInterval()).isEqualTo(defaults.probeInterval());
        assertThat(options.stickyMarkFile()).contains(temp.resolve("hetgpu/gpu-health-marks"));
    }

    @Test
    void healthFlagsReachTheXidRules() {
        var main = new DevicePluginMain();
        new CommandLine(main).parseArgs("--health-skip-xids", "all", "--health-critical-xids", "79, 48");

        var rules = main.nvmlOptions().xidRules();

        assertThat(rules.skipped()).isEqualTo(XidSelection.ALL);
        assertThat(rules.critical()).isEqualTo(XidSelection.of(48, 79));
        assertThat(rules.classify(74)).isEqualTo(XidClass.APPLICATION);
        assertThat(rules.classify(79)).isEqualTo(XidClass.REBOOT_REQUIRED);
    }

    @Test
    void needsANodeNameToPublishTheInventory() {
        assertThat(run("--node-name", "", "--gpu-source", "simulated:dgx1-v100"))
                .isEqualTo("hetgpu-device-plugin: --node-name (or NODE_NAME) is required unless --publish-node-inventory false (see --help)");
    }

    @Test
    void reportsABadValueBeforeTheMissingNodeNameItWouldNeed() {
        // No NODE_NAME in a test's environment is not guaranteed: an empty --node-name stands for it.
        assertThat(run("--node-name", "", "--gpu-source", "nvlm"))
                .startsWith("hetgpu-device-plugin: --gpu-source must be \"nvml\" or \"simulated:<profile>\"").contains("got \"nvlm\"");
        assertThat(run("--node-name", "", "--http-port", "99999")).contains("--http-port must be 0..65535, got 99999");
        assertThat(run("--node-name", "", "--pod-resources-interval", "0s")).contains("--pod-resources-interval must be positive");
        assertThat(run("--node-name", "", "--pod-resources-interval", "-5s")).contains("--pod-resources-interval must be positive, got \"-5s\"");
        assertThat(run("--node-name", "", "--tier-table", temp.resolve("none.yaml").toString()))
                .isEqualTo("hetgpu-device-plugin: --tier-table: no such file " + temp.resolve("none.yaml"));
    }

    @Test
    void reportsADiscoveryFailureInOneSentence() {
        assertThat(run("--gpu-source", "simulated:no-such-machine", "--publish-node-inventory", "false",
                "--device-plugin-dir", temp.toString(), "--http-port", "0"))
                .startsWith("hetgpu-device-plugin: ").contains("no-such-machine").doesNotContain("\tat ");
    }

    @Test
    void reportsABadTierTableNamingTheEntry() throws Exception {
        var table = java.nio.file.Files.writeString(temp.resolve("extender.yaml"), "version: v1\npolicy:\n  tiers:\n    - {model: T4, rank: top, computeCapability: '7.5', maxMemoryMiB: 15360}\n");

        assertThat(run("--gpu-source", "simulated:t4-4x", "--publish-node-inventory", "false", "--tier-table", table.toString(),
                "--device-plugin-dir", temp.toString(), "--http-port", "0"))
                .isEqualTo("hetgpu-device-plugin: " + table + ": policy.tiers[0].rank: expected a whole number >= 1, got \"top\"");
        assertThat(run("--gpu-source", "simulated:t4-4x", "--publish-node-inventory", "false", "--tier-table", temp.resolve("none.yaml").toString(),
                "--device-plugin-dir", temp.toString(), "--http-port", "0"))
                .isEqualTo("hetgpu-device-plugin: --tier-table: no such file " + temp.resolve("none.yaml"));
        assertThat(run("--gpu-source", "simulated:t4-4x", "--publish-node-inventory", "false", "--tier-table", temp.toString(),
                "--device-plugin-dir", temp.toString(), "--http-port", "0"))
                .startsWith("hetgpu-device-plugin: --tier-table: " + temp + " cannot be read (");
    }

    @Test
    void draModeFlagsAreCheckedNamingTheFlag() {
        assertThat(run("--kubelet-api", "both", "--publish-node-inventory", "false"))
                .isEqualTo("hetgpu-device-plugin: Invalid value for option '--kubelet-api': expected device-plugin or dra, got \"both\" (see --help)");
        assertThat(run("--kubelet-api", "dra", "--driver-name", "GPU.example.com", "--publish-node-inventory", "false"))
                .contains("--driver-name: expected a DNS subdomain of at most 63 characters").contains("got \"GPU.example.com\"");
        assertThat(run("--kubelet-api", "dra", "--driver-name", "a".repeat(64) + ".io", "--publish-node-inventory", "false"))
                .contains("--driver-name: expected a DNS subdomain of at most 63 characters");
        assertThat(run("--kubelet-api", "dra", "--publish-node-inventory", "false", "--node-name", "n1"))
                .isEqualTo("hetgpu-device-plugin: --kubelet-api dra reads ResourceClaims and publishes ResourceSlices through the API "
                        + "server: it cannot run with --publish-node-inventory false (see --help)");
        assertThat(run("--kubelet-api", "dra", "--node-name", ""))
                .isEqualTo("hetgpu-device-plugin: --node-name (or NODE_NAME) is required with --kubelet-api dra (the node's pool "
                        + "is named after it) (see --help)");
    }

    @Test
    void draModeWithoutKubeletsPluginRegistryIsOneSentence() {
        var missing = temp.resolve("plugins_registry");
        assertThat(run("--kubelet-api", "dra", "--node-name", "n1", "--gpu-source", "simulated:t4-4x", "--http-port", "0",
                "--plugin-registry-dir", missing.toString(), "--dra-plugin-dir", temp.resolve("plugins").toString(),
                "--cdi-dir", temp.resolve("cdi").toString()))
                .isEqualTo("hetgpu-device-plugin: plugin registry folder " + missing + " does not exist (is it mounted from the host?)");
    }

    @Test
    void draModeKeepsHealthMarksInTheDriversOwnFolder() {
        var main = new DevicePluginMain();
        new CommandLine(main).parseArgs("--kubelet-api", "DRA", "--dra-plugin-dir", temp.toString(), "--driver-name", "gpu.example.com");

        assertThat(main.kubeletApi).isEqualTo(DevicePluginMain.KubeletApi.DRA);
        assertThat(main.nvmlOptions().stickyMarkFile()).contains(temp.resolve("gpu.example.com/gpu-health-marks"));
        assertThat(main.pluginRegistryDir).isEqualTo(Path.of("/var/lib/kubelet/plugins_registry"));
        assertThat(main.cdiDir).isEqualTo(Path.of("/var/run/cdi"));
        assertThat(DevicePluginMain.driverNameProblem("gpu.hetgpu.io")).isEmpty();
    }

    @Test
    void helpNeverBreaksANameAtItsDot() {
        var usage = DevicePluginMain.commandLine().getUsageMessage();
        assertThat(usage).contains("nvidia.com/gpu", "hetgpu.io/gpu.tier");
        // "nvidia." at a line's end and "com/gpu" at the next line's start: a name cut in two.
        assertThat(usage).doesNotContainPattern("[a-z0-9]\\.\\R\\s+[a-z0-9][-a-z0-9.]*/");
    }

    private static String run(String... args) {
        var err = new StringWriter();
        var commandLine = DevicePluginMain.commandLine();
        commandLine.setErr(new PrintWriter(err, true));
        int code = commandLine.execute(args);
        assertThat(code).isNotZero();
        var text = err.toString().strip();
        assertThat(text.lines()).as("one line, no stack trace: %s", text).hasSize(1);
        return text;
    }
}
