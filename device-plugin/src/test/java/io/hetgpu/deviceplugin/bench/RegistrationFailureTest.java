package io.hetgpu.deviceplugin.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.deviceplugin.kubelet.KubeletStandIn;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A plugin that never registers ends the registration benchmark with the reason its log gives, in one line. */
class RegistrationFailureTest {

    @TempDir
    Path dir;

    @Test
    void aPluginThatExitsIsReportedWithItsExitStatusAndItsLogsLastLine() throws Exception {
        var log = dir.resolve("plugin.log");
        var plugin = new ProcessBuilder("sh", "-c", "echo starting; echo 'hetgpu-device-plugin: NVML is not available on this node'; echo; exit 1")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        plugin.waitFor();
        try (var kubelet = new KubeletStandIn(Files.createDirectory(dir.resolve("device-plugins")), dir.resolve("pod-resources.sock")).start()) {
            assertThatThrownBy(() -> RegistrationBenchmark.firstRegistration(plugin, kubelet, log, Duration.ofMillis(50)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("the plugin exited with 1 before it registered: hetgpu-device-plugin: NVML is not available on this node ("
                            + log + ")");
        }
    }

    @Test
    void aPluginStillRunningIsStoppedAndSaidToHaveNotRegisteredInTime() throws Exception {
        var log = dir.resolve("plugin.log");
        var plugin = new ProcessBuilder("sh", "-c", "echo 'waiting for the API server'; exec sleep 60").redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        try (var kubelet = new KubeletStandIn(Files.createDirectory(dir.resolve("device-plugins")), dir.resolve("pod-resources.sock")).start()) {
            assertThatThrownBy(() -> RegistrationBenchmark.firstRegistration(plugin, kubelet, log, Duration.ofSeconds(1)))
                    .hasMessage("the plugin did not register within 1 s: waiting for the API server (" + log + ")");
            assertThat(plugin.isAlive()).as("the benchmark stops the plugin it gave up on").isFalse();
        } finally {
            plugin.destroyForcibly();
        }
    }

    @Test
    void aPluginThatCannotPublishIsSaidNotToBeforeItsFiguresAreRead() throws Exception {
        var log = dir.resolve("plugin.log");
        var api = "https://10.96.0.1:443";

        Files.writeString(log, "2026-11-27T02:00:00Z [main] INFO DevicePluginMain - started 400 ms after the JVM\n");
        assertThat(RegistrationBenchmark.publishing(api, log)).isEqualTo("publishing to " + api
                + " not confirmed yet: the plugin logged neither success nor failure");

        Files.writeString(log, "2026-11-27T02:00:01Z [node-inventory-sync] INFO NodeInventorySync - Publishing the GPU inventory on node gpu-1\n");
        assertThat(RegistrationBenchmark.publishing(api, log)).isEqualTo("publishing the node inventory to " + api);

        Files.writeString(log, "2026-11-27T02:00:01Z [node-inventory-sync] INFO NodeInventorySync - Publishing the GPU inventory on node gpu-1\n"
                + "2026-11-27T02:00:20Z [node-inventory-sync] WARN NodeInventorySync - Cannot publish the GPU inventory on node gpu-1: refused\n");
        assertThat(RegistrationBenchmark.publishing(api, log))
                .isEqualTo("NOT publishing to " + api + ", the plugin logged: Cannot publish the GPU inventory on node gpu-1: refused");

        Files.writeString(log, "2026-11-27T02:00:20Z [node-inventory-sync] WARN NodeInventorySync - Cannot publish the GPU inventory on node gpu-1: refused\n"
                + "2026-11-27T02:00:25Z [node-inventory-sync] INFO NodeInventorySync - Publishing the GPU inventory on node gpu-1\n");
        assertThat(RegistrationBenchmark.publishing(api, log)).as("back once the API server answers").isEqualTo("publishing the node inventory to " + api);
    }
}
