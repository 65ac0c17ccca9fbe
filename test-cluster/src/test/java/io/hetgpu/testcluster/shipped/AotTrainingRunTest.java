package io.hetgpu.testcluster.shipped;

import static io.hetgpu.testcluster.shipped.ShippedArtifacts.DEVICE_PLUGIN;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The device plugin image's AOT training run, from the shipped jar as the Dockerfile runs it: the plugin it trains
 * registers with the trainer's kubelet and publishes its Node to the trainer's API server over TLS (the classes a pod
 * loads at start are then in the cache), and the cache is written when the run ends.
 */
class AotTrainingRunTest {

    private static final String TRAINER = "io.hetgpu.deviceplugin.training.AotTrainingRun";

    @TempDir
    Path folder;

    @Test
    void trainsThePluginAgainstAKubeletAndAnApiServerAndWritesTheCache() throws Exception {
        var cache = folder.resolve("plugin.aot");
        var jar = DEVICE_PLUGIN.jar().toString();
        var run = run(List.of("-cp", jar, TRAINER, "--seconds=4", "--", "-XX:+UseCompactObjectHeaders", "-XX:+UseSerialGC",
                "-Xint", "-XX:AOTCacheOutput=" + cache, "-jar", jar, "--gpu-source=simulated:dgx1-v100", "--http-port=0"));
        assertThat(run.exit()).as(run.output()).isZero();
        assertThat(run.output()).contains("registered with kubelet", "Publishing the GPU inventory on node aot-training")
                .doesNotContain("answered 404");
        assertThat(cache).isNotEmptyFile();
    }

    @Test
    void aRunWithoutTheSeparatorIsRefusedWithItsUsage() throws Exception {
        var run = run(List.of("-cp", DEVICE_PLUGIN.jar().toString(), TRAINER, "--seconds=4", "-jar", "plugin.jar"));
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.output()).startsWith("usage: AotTrainingRun --seconds=N -- JVM-OPTIONS -jar JAR ARGUMENTS")
                .contains("got: --seconds=4 -jar plugin.jar");
    }

    private record Run(int exit, String output) {
    }

    private Run run(List<String> arguments) throws IOException, InterruptedException {
        var command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(arguments);
        var log = folder.resolve("training.log");
        var process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!process.waitFor(2, TimeUnit.MINUTES)) {
            process.destroyForcibly();
        }
        return new Run(process.waitFor(), Files.readString(log, StandardCharsets.UTF_8));
    }
}
