package io.hetgpu.deviceplugin.training;

import io.hetgpu.deviceplugin.node.NodeInventorySync;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The image build's AOT training runs (the Dockerfile's RUN lines; {@code ./hetgpu bench registration} runs the same):
 * {@code AotTrainingRun [--patience=S] -- OPTIONS -jar JAR ARGUMENTS} runs {@code java OPTIONS -jar JAR ARGUMENTS}
 * (options that name {@code -XX:AOTCacheOutput=}) against a {@link StandInApiServer} over TLS and a stand-in kubelet,
 * waits until the plugin has gone through its start, then stops it with SIGTERM, on which the JVM writes the cache. As a
 * device plugin (a {@link TrainingKubelet}), its start is: registered with the kubelet, its Node published, its pod watch
 * opened. As hetgpu's DRA driver ({@code --kubelet-api=dra} among ARGUMENTS; a {@link TrainingPluginWatcher}): registered
 * through kubelet's plugin watcher, its ResourceSlice published, and a claim ({@link TrainingClaim}) prepared and
 * unprepared, as when the first pod with GPUs starts and ends on its node. A JVM takes one cache and loads all of it, so
 * each mode has a cache of its own, trained by a run of its own, and neither pays for the other's classes.
 *
 * <p>It waits for those steps rather than for a time, because an interpreter-only plugin on a slow or busy build machine
 * takes what it takes; when they have not all happened within S seconds (default 120), one failed (a claim the driver
 * would not prepare), or the plugin exits first, it kills the plugin and removes any cache, says which step did not
 * happen and exits 1, and the image build fails instead of shipping a cache without those steps' classes.
 *
 * <p>Why stand-ins at build time: the JVM loads every class of the cache at start, and each class a pod loads that
 * the cache does not hold costs more: parsed into metaspace, and read from the runtime's module image, whose pages the
 * pod then holds. Trained with no API server (an address that refused the connection) and no kubelet, the plugin in a
 * pod loaded some 1,440 classes the cache lacked (the TLS handshake, the certificate check, the HTTP exchange, the
 * Node's model, the pod watch, the registration's gRPC) and held 98.9-99.2 MiB once registered on the image's Java
 * runtime; trained here, 92.8-94.4 MiB.
 *
 * <p>The certificate is the API server's own, made by the runtime's {@code keytool}, and the plugin reaches the server
 * as a pod reaches its cluster's: at an IP address from {@code KUBERNETES_SERVICE_HOST}, trusting the certificate
 * through a CA file, so that it checks the chain and the address as it does in a cluster.
 */
public final class AotTrainingRun {

    /** The node the training plugin publishes as, and the one the API server holds. */
    static final String NODE_NAME = "aot-training";

    /** How long the plugin may take to go through the steps, unless {@code --patience} says otherwise. */
    static final Duration DEFAULT_PATIENCE = Duration.ofSeconds(120);

    private static final String CACHE_OUTPUT = "-XX:AOTCacheOutput=";

    private static final String USAGE = "usage: AotTrainingRun [--patience=SECONDS] -- JVM-OPTIONS -jar JAR ARGUMENTS"
            + " (SECONDS from 1 to 3600, default 120: how long the plugin may take to go through its start: register with the"
            + " kubelet, publish its Node and open its pod watch; with --kubelet-api=dra, register through the plugin watcher,"
            + " publish its ResourceSlice and prepare and unprepare a claim)";

    /**
     * A step of the plugin's start whose classes the cache is to hold.
     *
     * @param done     the step as the failure line names it, after "had not"
     * @param happened completes once the step has happened
     */
    record Step(String done, CompletableFuture<?> happened) {
    }

    private AotTrainingRun() {
    }

    public static void main(String[] args) throws Exception {
        var words = List.of(args);
        int separator = words.indexOf("--");
        if (separator < 0 || separator > 1 || !words.contains("-jar")
                || separator == 1 && !args[0].startsWith("--patience=")) {
            System.err.println(USAGE + ", got: " + String.join(" ", args));
            System.exit(2);
        }
        var patience = separator == 1 ? patience(args[0].substring("--patience=".length())) : Optional.of(DEFAULT_PATIENCE);
        if (patience.isEmpty()) {
            System.err.println("AotTrainingRun: --patience: expected whole seconds from 1 to 3600, got \""
                    + args[0].substring("--patience=".length()) + "\"");
            System.exit(2);
        }
        System.exit(run(patience.get(), words.subList(separator + 1, args.length)));
    }

    /** {@code --patience}'s value: whole seconds from 1 to 3600, or empty. */
    static Optional<Duration> patience(String seconds) {
        return seconds.matches("[1-9][0-9]{0,3}") && Integer.parseInt(seconds) <= 3600
                ? Optional.of(Duration.ofSeconds(Integer.parseInt(seconds))) : Optional.empty();
    }

    private static int run(Duration patience, List<String> plugin) throws IOException, InterruptedException, GeneralSecurityException {
        var folder = Files.createTempDirectory("aot-training");
        try (var apiServer = StandInApiServer.started(folder, NODE_NAME)) {
            return draMode(plugin) ? trainDra(patience, plugin, folder, apiServer) : trainDevicePlugin(patience, plugin, folder, apiServer);
        } finally {
            try (var files = Files.walk(folder)) {
                files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    /** The device plugin: registered with the kubelet, its Node published, its pod watch open. */
    private static int trainDevicePlugin(Duration patience, List<String> plugin, Path folder, StandInApiServer apiServer)
            throws IOException, InterruptedException {
        var podResourcesSocket = folder.resolve("pod-resources.sock");
        try (var kubelet = TrainingKubelet.started(folder, podResourcesSocket)) {
            var saidPublishing = new CompletableFuture<Void>();
            var training = Training.start(plugin, List.of("--node-name=" + NODE_NAME, "--device-plugin-dir=" + folder,
                    "--pod-resources-socket=" + podResourcesSocket), apiServer, folder, line -> {
                if (line.endsWith(NodeInventorySync.publishing(NODE_NAME))) {
                    saidPublishing.complete(null);
                }
            });
            return training.finish(plugin, patience, List.of(
                    new Step("registered with the kubelet", kubelet.registered()),
                    // Received, and the answer handled: until it is, the plugin is still loading the classes that handle it.
                    new Step("published its Node to the API server", apiServer.nodePublished().thenCombine(saidPublishing, (received, said) -> said)),
                    new Step("opened its pod watch on the API server", apiServer.podWatchOpened())));
        }
    }

    /**
     * The DRA driver: registered with kubelet's plugin watcher, its ResourceSlice published, and one claim prepared and
     * unprepared as kubelet does when a pod with GPUs starts and ends (the claim's read from the API server, its CDI spec
     * and checkpoint written and removed), once registered and published, as a kubelet can only ask then.
     */
    private static int trainDra(Duration patience, List<String> plugin, Path folder, StandInApiServer apiServer)
            throws IOException, InterruptedException {
        var registry = Files.createDirectory(folder.resolve("plugins_registry"));
        var claim = TrainingClaim.of(NODE_NAME);
        apiServer.holdClaim(claim.json());
        try (var watcher = TrainingPluginWatcher.started(registry);
             var calls = Executors.newVirtualThreadPerTaskExecutor()) {
            var saidPublishing = new CompletableFuture<Void>();
            var training = Training.start(plugin, List.of("--node-name=" + NODE_NAME, "--plugin-registry-dir=" + registry,
                    "--dra-plugin-dir=" + folder.resolve("plugins"), "--cdi-dir=" + folder.resolve("cdi")), apiServer, folder, line -> {
                if (line.contains(SLICE_PUBLISHING)) {
                    saidPublishing.complete(null);
                }
            });
            // Received, and the answer handled, as for the device plugin's Node.
            var published = apiServer.slicePublished().thenCombine(saidPublishing, (received, said) -> said);
            watcher.registered().thenCombine(published, (draSocket, both) -> draSocket).thenAcceptAsync(draSocket ->
                    watcher.prepareAndUnprepare(draSocket, claim.namespace(), claim.name(), claim.uid()), calls);
            return training.finish(plugin, patience, List.of(
                    new Step("registered with kubelet's plugin watcher", watcher.registered()),
                    new Step("published its ResourceSlice to the API server", published),
                    new Step("prepared a claim", watcher.prepared()),
                    new Step("unprepared it", watcher.unprepared())));
        }
    }

    /** The DRA driver's line once its ResourceSlice is published (of whichever driver name it was given). */
    static final String SLICE_PUBLISHING = "Publishing the GPUs of node " + NODE_NAME + " as a ResourceSlice of ";

    /** Whether the plugin's arguments (after {@code -jar JAR}) run it as hetgpu's DRA driver. */
    static boolean draMode(List<String> plugin) {
        int jar = plugin.indexOf("-jar");
        var arguments = jar < 0 || jar + 2 > plugin.size() ? List.<String>of() : plugin.subList(jar + 2, plugin.size());
        for (int i = 0; i < arguments.size(); i++) {
            if (arguments.get(i).equals("--kubelet-api=dra")
                    || arguments.get(i).equals("--kubelet-api") && i + 1 < arguments.size() && arguments.get(i + 1).equals("dra")) {
                return true;
            }
        }
        return false;
    }

    /** The plugin's process and the thread that relays its output. */
    private record Training(Process process, Thread relay) {

        /**
         * {@code java PLUGIN EXTRA}, reaching {@code apiServer} as a pod reaches its cluster's (the address, and the CA to
         * check the server's certificate against; no kubeconfig and no other API server of the build machine's), each line
         * of its output to {@code lines} too.
         */
        static Training start(List<String> plugin, List<String> extra, StandInApiServer apiServer, Path folder, Consumer<String> lines)
                throws IOException {
            var command = new ArrayList<String>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(plugin);
            command.addAll(extra);
            // The plugin's output goes through this run, which learns from it when the plugin has handled an answer.
            var launch = new ProcessBuilder(command).redirectErrorStream(true);
            launch.environment().remove("JAVA_TOOL_OPTIONS");
            launch.environment().remove("KUBERNETES_MASTER");
            launch.environment().putAll(apiServer.podEnvironment());
            launch.environment().put("KUBECONFIG", folder.resolve("no-kubeconfig").toString());
            var process = launch.start();
            var relay = Thread.ofPlatform().daemon().name("plugin-output").start(() -> AotTrainingRun.relay(process.getInputStream(), lines));
            return new Training(process, relay);
        }

        /**
         * Once the steps have happened, SIGTERM, on which the JVM writes the cache: 0. Otherwise the plugin killed and any
         * cache removed, the failure line printed: 1.
         */
        int finish(List<String> plugin, Duration patience, List<Step> steps) throws IOException, InterruptedException {
            var untrained = awaitSteps(process, steps, patience);
            if (untrained.isPresent()) {
                // Killed, not stopped: on SIGTERM the JVM would write a cache without the steps' classes. One that exited
                // by itself may have written one as it did.
                process.toHandle().destroyForcibly();
                process.waitFor();
                relay.join(patience);
                for (var cache : cacheOutput(plugin)) {
                    Files.deleteIfExists(cache);
                }
                System.err.println(untrained.get());
                return 1;
            }
            // Through its handle: Process.destroy would also close the output the plugin goes on writing as it exits.
            process.toHandle().destroy();
            // The JVM writes the cache as it exits.
            if (!process.waitFor(patience.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                System.err.printf("AotTrainingRun: the plugin had not exited %d s after SIGTERM, so wrote no cache%n", patience.toSeconds());
                return 1;
            }
            relay.join(patience);
            return 0;
        }
    }

    /** Copies the plugin's output to this run's, line by line, each line to {@code lines} too. */
    private static void relay(InputStream output, Consumer<String> lines) {
        try (var reader = new BufferedReader(new InputStreamReader(output, StandardCharsets.UTF_8))) {
            for (var line = reader.readLine(); line != null; line = reader.readLine()) {
                System.out.println(line);
                lines.accept(line);
            }
        } catch (IOException e) {
            System.err.println("AotTrainingRun: the plugin's output could not be read: " + e.getMessage());
        }
    }

    /** The cache file the plugin's JVM options name ({@code -XX:AOTCacheOutput=}), if they name one before {@code -jar}. */
    static List<Path> cacheOutput(List<String> plugin) {
        int jar = plugin.indexOf("-jar");
        return plugin.subList(0, jar < 0 ? plugin.size() : jar).stream().filter(option -> option.startsWith(CACHE_OUTPUT))
                .map(option -> Path.of(option.substring(CACHE_OUTPUT.length()))).toList();
    }

    /**
     * Waits until every step has happened, one has failed, the plugin has exited, or {@code patience} has passed: empty
     * when every step happened, otherwise the one line that says which did not (and why, for one that failed).
     */
    static Optional<String> awaitSteps(Process plugin, List<Step> steps, Duration patience) throws InterruptedException {
        var all = CompletableFuture.allOf(steps.stream().map(Step::happened).toArray(CompletableFuture[]::new));
        var oneFailed = new CompletableFuture<Void>();
        steps.forEach(step -> step.happened().whenComplete((done, failure) -> {
            if (failure != null) {
                oneFailed.complete(null);
            }
        }));
        try {
            CompletableFuture.anyOf(all, plugin.onExit(), oneFailed).get(patience.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            // Told below by the steps still to happen.
        }
        var missing = steps.stream().filter(step -> step.happened().state() != Future.State.SUCCESS)
                .map(step -> step.happened().state() == Future.State.FAILED ? step.done() + " (" + reason(step.happened().exceptionNow()) + ")"
                        : step.done()).toList();
        if (missing.isEmpty()) {
            return Optional.empty();
        }
        boolean failed = steps.stream().anyMatch(step -> step.happened().state() == Future.State.FAILED);
        return Optional.of(untrained(missing, plugin.isAlive() ? OptionalInt.empty() : OptionalInt.of(plugin.exitValue()),
                failed ? Optional.empty() : Optional.of(patience)));
    }

    /** A failed step's reason: its exception's message, under the wrapping a dependent stage adds. */
    private static String reason(Throwable failure) {
        var cause = failure;
        while (cause instanceof CompletionException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause.getMessage() == null ? cause.toString() : cause.getMessage();
    }

    /**
     * The failure line: which steps had not happened, and whether the plugin had exited, a step had failed (no
     * {@code patience}: the run did not wait it out) or the patience had run out.
     */
    static String untrained(List<String> missing, OptionalInt exitStatus, Optional<Duration> patience) {
        var when = exitStatus.isPresent() ? "the plugin exited with status " + exitStatus.getAsInt() + "; it had not "
                : patience.map(time -> "after " + time.toSeconds() + " s (--patience) the plugin had not ").orElse("the plugin had not ");
        return "AotTrainingRun: " + when + String.join(", nor ", missing) + "; no AOT cache made";
    }
}
