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
 * The device plugin image's AOT training runs, from the shipped jar as the Dockerfile runs them: the plugin it trains
 * registers with the trainer's kubelet, publishes its Node to the trainer's API server over TLS and watches its pods
 * there (the classes a pod loads at start are then in the cache), and the cache is written when the run ends, which is
 * once all three have happened however long they take; when one does not, the run says which and fails, with no cache.
 * As the DRA driver, the steps are the driver's: registration through the plugin watcher, the ResourceSlice, a claim.
 */
class AotTrainingRunTest {

    private static final String TRAINER = "io.hetgpu.deviceplugin.training.AotTrainingRun";
    private static final List<String> PLUGIN_OPTIONS = List.of("-XX:+UseCompactObjectHeaders", "-XX:+UseSerialGC", "-Xint");

    @TempDir
    Path folder;

    @Test
    void trainsThePluginAgainstAKubeletAndAnApiServerAndWritesTheCache() throws Exception {
        var cache = folder.resolve("plugin.aot");
        var run = train("--patience=120", cache, "--gpu-source=simulated:dgx1-v100");
        assertThat(run.exit()).as(run.output()).isZero();
        assertThat(run.output()).contains("registered with kubelet", "Publishing the GPU inventory on node aot-training")
                .doesNotContain("answered 404").doesNotContain("AotTrainingRun:");
        assertThat(cache).isNotEmptyFile();
    }

    /**
     * As hetgpu's DRA driver, its own cache: registered through the trainer's plugin watcher, its ResourceSlice published
     * to the trainer's API server, and a claim read from there, prepared into a CDI spec and unprepared.
     */
    @Test
    void trainsTheDraDriverThroughItsRegistrationSliceAndAClaimAndWritesItsCache() throws Exception {
        var cache = folder.resolve("dra.aot");
        var run = train("--patience=120", cache, "--kubelet-api=dra", "--gpu-source=simulated:dgx1-v100");
        assertThat(run.exit()).as(run.output()).isZero();
        assertThat(run.output()).contains("Registered with kubelet as DRA driver gpu.hetgpu.io",
                        "Publishing the GPUs of node aot-training as a ResourceSlice", "Prepared claim aot-training/training-gpus",
                        "Unprepared claim aot-training/training-gpus")
                .doesNotContain("answered 404").doesNotContain("AotTrainingRun:");
        assertThat(cache).isNotEmptyFile();
    }

    /** A driver that prepares none of the claim's GPUs (here: they are another driver's) fails the run at once. */
    @Test
    void aDraDriverThatPreparesNoGpusFailsTheRunSayingSoAndWritesNoCache() throws Exception {
        var cache = folder.resolve("dra.aot");
        var run = train("--patience=120", cache, "--kubelet-api=dra", "--driver-name=other.example.com", "--gpu-source=simulated:dgx1-v100");
        assertThat(run.exit()).as(run.output()).isEqualTo(1);
        assertThat(run.output().lines().filter(line -> line.startsWith("AotTrainingRun:"))).as(run.output()).singleElement()
                .isEqualTo("AotTrainingRun: the plugin had not prepared a claim (NodePrepareResources answered no devices for claim"
                        + " aot-training/training-gpus), nor unprepared it; no AOT cache made");
        assertThat(cache).doesNotExist();
    }

    @Test
    void aPluginThatNeverPublishesItsNodeFailsTheRunNamingThatStepAndWritesNoCache() throws Exception {
        var cache = folder.resolve("plugin.aot");
        var run = train("--patience=5", cache, "--gpu-source=simulated:dgx1-v100", "--publish-node-inventory=false");
        assertThat(run.exit()).as(run.output()).isEqualTo(1);
        // Whether it registered within the 5 s depends on the machine; that it published nothing does not.
        assertThat(run.output().lines().filter(line -> line.startsWith("AotTrainingRun:"))).as(run.output()).singleElement()
                .asString().matches("AotTrainingRun: after 5 s \\(--patience\\) the plugin had not (registered with the kubelet, nor )?"
                        + "published its Node to the API server, nor opened its pod watch on the API server; no AOT cache made");
        assertThat(cache).doesNotExist();
    }

    @Test
    void aPluginThatExitsAtStartFailsTheRunAtOnceWithItsStatus() throws Exception {
        var cache = folder.resolve("plugin.aot");
        var run = train("--patience=120", cache, "--gpu-source=no-such-source");
        assertThat(run.exit()).as(run.output()).isEqualTo(1);
        assertThat(run.output()).as(run.output()).containsPattern("(?m)^AotTrainingRun: the plugin exited with status [1-9][0-9]*; it had not "
                + "registered with the kubelet, nor published its Node to the API server, nor opened its pod watch on the API server;"
                + " no AOT cache made$");
        assertThat(cache).doesNotExist();
    }

    @Test
    void aRunWithoutTheSeparatorOrWithAFixedTimeIsRefusedWithItsUsage() throws Exception {
        for (var arguments : List.of(List.of("--patience=120", "-jar", "plugin.jar"), List.of("--seconds=4", "--", "-jar", "plugin.jar"))) {
            var run = run(concat(List.of("-cp", DEVICE_PLUGIN.jar().toString(), TRAINER), arguments));
            assertThat(run.exit()).isEqualTo(2);
            assertThat(run.output()).startsWith("usage: AotTrainingRun [--patience=SECONDS] -- JVM-OPTIONS -jar JAR ARGUMENTS")
                    .contains("got: " + String.join(" ", arguments));
        }
    }

    @Test
    void aPatienceOutsideOneSecondToAnHourIsRefusedNamingTheValue() throws Exception {
        var run = run(List.of("-cp", DEVICE_PLUGIN.jar().toString(), TRAINER, "--patience=0", "--", "-jar", "plugin.jar"));
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.output().strip()).isEqualTo("AotTrainingRun: --patience: expected whole seconds from 1 to 3600, got \"0\"");
    }

    /** The training run as the Dockerfile's, with the cache written to {@code cache} and the plugin given {@code arguments}. */
    private Run train(String patience, Path cache, String... arguments) throws IOException, InterruptedException {
        var jar = DEVICE_PLUGIN.jar().toString();
        var command = new ArrayList<>(List.of("-cp", jar, TRAINER, patience, "--"));
        command.addAll(PLUGIN_OPTIONS);
        command.addAll(List.of("-XX:AOTCacheOutput=" + cache, "-jar", jar, "--http-port=0"));
        command.addAll(List.of(arguments));
        return run(command);
    }

    private static List<String> concat(List<String> first, List<String> second) {
        var both = new ArrayList<>(first);
        both.addAll(second);
        return both;
    }

    private record Run(int exit, String output) {
    }

    private Run run(List<String> arguments) throws IOException, InterruptedException {
        var command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(arguments);
        var log = folder.resolve("training.log");
        var process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        // The trainer bounds its own waits; this only keeps a hung one from hanging the build.
        if (!process.waitFor(10, TimeUnit.MINUTES)) {
            process.destroyForcibly();
        }
        return new Run(process.waitFor(), Files.readString(log, StandardCharsets.UTF_8));
    }
}
