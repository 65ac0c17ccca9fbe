package io.hetgpu.deviceplugin.training;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The training run stops the plugin only once it has gone through the steps whose classes the cache is to hold, however
 * long they take up to its patience; past that, or when the plugin exits first, it names the step that did not happen.
 */
class AotTrainingStepsTest {

    private static final Duration GENEROUS = Duration.ofSeconds(120);

    /** A process that runs until it is stopped, standing in for the plugin. */
    private final Process plugin = start("cat");
    private final CompletableFuture<Void> registered = new CompletableFuture<>();
    private final CompletableFuture<Void> published = new CompletableFuture<>();
    private final List<AotTrainingRun.Step> steps = List.of(new AotTrainingRun.Step("registered with the kubelet", registered),
            new AotTrainingRun.Step("published its Node to the API server", published));

    @AfterEach
    void stop() {
        plugin.destroyForcibly();
    }

    @Test
    void waitsForAPublishThatComesLongAfterTheRegistration() throws Exception {
        try (var executor = Executors.newSingleThreadExecutor()) {
            var waiter = new CompletableFuture<Thread>();
            Future<Optional<String>> waiting = executor.submit(() -> {
                waiter.complete(Thread.currentThread());
                return AotTrainingRun.awaitSteps(plugin, steps, GENEROUS);
            });
            registered.complete(null);
            // Still waiting, in its bounded wait, for the step that has not happened.
            await().atMost(Duration.ofSeconds(30)).until(() -> waiter.join().getState() == Thread.State.TIMED_WAITING);
            assertThat(waiting).isNotDone();

            published.complete(null);

            assertThat(waiting.get()).isEmpty();
            assertThat(plugin.isAlive()).as("the run, not the wait, stops the plugin").isTrue();
        }
    }

    @Test
    void namesTheStepThatDidNotHappenWithinThePatience() throws Exception {
        registered.complete(null);

        assertThat(AotTrainingRun.awaitSteps(plugin, steps, Duration.ofSeconds(1))).contains(
                "AotTrainingRun: after 1 s (--patience) the plugin had not published its Node to the API server; no AOT cache made");
    }

    @Test
    void namesBothStepsWhenNeitherHappened() {
        assertThat(AotTrainingRun.untrained(List.of("registered with the kubelet", "published its Node to the API server"),
                OptionalInt.empty(), Optional.of(GENEROUS))).isEqualTo("AotTrainingRun: after 120 s (--patience) the plugin had not registered"
                + " with the kubelet, nor published its Node to the API server; no AOT cache made");
    }

    @Test
    void stopsWaitingWhenThePluginExitsFirstAndSaysWithWhatStatus() throws Exception {
        var exiting = start("sh", "-c", "exit 3");

        assertThat(AotTrainingRun.awaitSteps(exiting, steps, GENEROUS)).contains("AotTrainingRun: the plugin exited with status 3;"
                + " it had not registered with the kubelet, nor published its Node to the API server; no AOT cache made");
    }

    @Test
    void stopsWaitingAsSoonAsAStepFailsAndSaysWhy() throws Exception {
        var prepared = new CompletableFuture<Void>();
        var unprepared = new CompletableFuture<Void>();
        var draSteps = List.of(new AotTrainingRun.Step("registered with kubelet's plugin watcher", registered),
                new AotTrainingRun.Step("prepared a claim", prepared),
                new AotTrainingRun.Step("unprepared it", unprepared));
        registered.complete(null);
        // As a dependent stage passes it on: wrapped.
        prepared.completeExceptionally(new java.util.concurrent.CompletionException(
                new IllegalStateException("NodePrepareResources answered no devices for claim aot-training/training-gpus")));
        long started = System.nanoTime();

        assertThat(AotTrainingRun.awaitSteps(plugin, draSteps, GENEROUS)).contains("AotTrainingRun: the plugin had not prepared a claim"
                + " (NodePrepareResources answered no devices for claim aot-training/training-gpus), nor unprepared it; no AOT cache made");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("not the patience").isLessThan(Duration.ofSeconds(60));
    }

    @Test
    void knowsTheDraDriverByItsKubeletApiArgumentEitherWay() {
        assertThat(AotTrainingRun.draMode(List.of("-Xint", "-jar", "plugin.jar", "--kubelet-api=dra", "--http-port=0"))).isTrue();
        assertThat(AotTrainingRun.draMode(List.of("-jar", "plugin.jar", "--http-port=0", "--kubelet-api", "dra"))).isTrue();
        assertThat(AotTrainingRun.draMode(List.of("-jar", "plugin.jar", "--kubelet-api=device-plugin"))).isFalse();
        assertThat(AotTrainingRun.draMode(List.of("-jar", "plugin.jar", "--gpu-source=simulated:dgx1-v100"))).isFalse();
        // A JVM option or the jar's name is not the plugin's argument.
        assertThat(AotTrainingRun.draMode(List.of("-Dx=--kubelet-api=dra", "-jar", "--kubelet-api=dra"))).isFalse();
        assertThat(AotTrainingRun.draMode(List.of("-jar", "plugin.jar", "--kubelet-api"))).isFalse();
    }

    @Test
    void takesWholeSecondsFromOneToAnHourForItsPatience() {
        assertThat(AotTrainingRun.patience("120")).contains(Duration.ofSeconds(120));
        assertThat(AotTrainingRun.patience("3600")).contains(Duration.ofHours(1));
        assertThat(List.of("0", "3601", "-5", "5s", "", "1.5", "0120")).allSatisfy(value ->
                assertThat(AotTrainingRun.patience(value)).as(value).isEmpty());
    }

    @Test
    void findsTheCacheThePluginsJvmOptionsNameToRemoveItWhenTheRunFails() {
        assertThat(AotTrainingRun.cacheOutput(List.of("-Xint", "-XX:AOTCacheOutput=/opt/plugin.aot", "-jar", "plugin.jar",
                "-XX:AOTCacheOutput=/an/argument/of/the/plugin"))).containsExactly(Path.of("/opt/plugin.aot"));
        assertThat(AotTrainingRun.cacheOutput(List.of("-Xint", "-jar", "plugin.jar"))).isEmpty();
    }

    private static Process start(String... command) {
        try {
            return new ProcessBuilder(command).start();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
