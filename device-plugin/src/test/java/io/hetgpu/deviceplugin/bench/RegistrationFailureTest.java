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
}
