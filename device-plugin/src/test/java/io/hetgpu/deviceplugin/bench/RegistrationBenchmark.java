package io.hetgpu.deviceplugin.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.hetgpu.deviceplugin.api.v1beta1.RegisterRequest;
import io.hetgpu.deviceplugin.kubelet.KubeletStandIn;
import io.hetgpu.deviceplugin.kubelet.UnixSocketTransport;
import io.hetgpu.deviceplugin.training.StandInApiServer;
import io.hetgpu.gpu.bench.BenchCommandLine;
import io.hetgpu.gpu.bench.MachineLoad;
import io.hetgpu.gpu.bench.ProcessStatus;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.release.ReleaseVersion;
import io.hetgpu.nvml.StandInDriver;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * Figures, not a test: how long the shaded jar takes from process launch to kubelet's Register call,
 * how long re-registration takes after a kubelet restart, the plugin's resident memory once registered,
 * and whether SIGTERM removes the socket. Runs the real jar (simulated DGX A100) against the kubelet stand-in,
 * with the JVM options of the image's ENTRYPOINT and the DaemonSet's JAVA_TOOL_OPTIONS ({@link ShippedJvm}),
 * publishing its inventory on Node {@code gpu-1} of a stand-in API server over TLS, reached as a pod reaches its
 * cluster's (the one the image build's training run publishes to, {@link StandInApiServer}; the client's HTTPS stack is
 * part of what the plugin's memory pays for). It runs twice: without an AOT cache, and with the
 * one the image build makes, made here the same way (the Dockerfile's training run). Then the same jar as hetgpu's DRA
 * driver ({@code --kubelet-api dra}, as {@code manifests/overlays/dra} runs it), against a stand-in of kubelet's plugin
 * watcher and the same stand-in API server: launch to registered with kubelet and to its ResourceSlice published, its RSS,
 * CPU and SIGTERM, with the image's cache of the DRA driver (trained in DRA mode by the Dockerfile's second training run).
 *
 * <pre>./hetgpu bench registration [RESTARTS] [--settle SECONDS] [--java-tool-options "OPTIONS"] [--api-server URL | --no-api-server]
 *                              [--gpu-source SOURCE] [--kubelet-api device-plugin|dra|both]</pre>
 * {@code --java-tool-options} replaces the manifest's value, to try other settings; {@code --api-server} publishes
 * to that server instead (anything that answers GET and PATCH on Node {@code gpu-1}); {@code --no-api-server}
 * does not publish; {@code --gpu-source nvml} measures the plugin on the machine's real GPUs instead of a simulated
 * DGX A100.
 */
@Command(name = "./hetgpu bench registration", mixinStandardHelpOptions = true, versionProvider = ReleaseVersion.class, sortOptions = false,
        description = "The device plugin's shaded jar, without and with the image's AOT cache: launch to registered with kubelet, "
                + "re-registration after kubelet restarts, RSS and what holds it, CPU once settled, SIGTERM to exit; then as hetgpu's "
                + "DRA driver: launch to registered and to its ResourceSlice published, RSS, CPU, SIGTERM.",
        footer = "Figures, not pass/fail.")
public final class RegistrationBenchmark implements Callable<Integer> {

    @Parameters(index = "0", arity = "0..1", paramLabel = "RESTARTS", defaultValue = "5",
            description = "kubelet restarts to time re-registration after (default: ${DEFAULT-VALUE})")
    int restarts;

    @Option(names = "--settle", paramLabel = "SECONDS", defaultValue = "12",
            description = "seconds to let the plugin settle before its RSS and CPU are read (default: ${DEFAULT-VALUE})")
    int settleSeconds;

    @Option(names = "--java-tool-options", paramLabel = "OPTIONS", description = "instead of the DaemonSet's JAVA_TOOL_OPTIONS")
    String javaToolOptions;

    @Option(names = "--api-server", paramLabel = "URL", description = "publish the node inventory there (default: a stand-in over TLS)")
    String apiServer;

    @Option(names = "--no-api-server", description = "publish nothing")
    boolean noApiServer;

    @Option(names = "--gpu-source", paramLabel = "SOURCE", defaultValue = "simulated:dgx-a100",
            description = "nvml on a GPU machine (default: ${DEFAULT-VALUE})")
    String gpuSource;

    @Option(names = "--kubelet-api", paramLabel = "device-plugin|dra|both", defaultValue = "both",
            description = "the device plugin API, hetgpu's DRA driver, or both one after the other (default: ${DEFAULT-VALUE}); "
                    + "the DRA driver publishes to the stand-in API server only")
    String kubeletApi;

    @Option(names = "--stand-in-driver", description = "with --gpu-source nvml on a machine without a GPU: build the stand-in NVIDIA "
            + "driver (one K80 board, " + StandInDriver.SOURCE + ") with gcc and give it to the plugin, as the NVIDIA container "
            + "runtime gives it the real one")
    boolean standInDriver;

    @Option(names = "--runtime", paramLabel = "JAVA_HOME", description = "the Java runtime to run the plugin (and its training "
            + "run) on; ./hetgpu passes the images' own, made by images/java-runtime (default: the one running this)")
    Path runtime;

    /** The launcher's: make the images' runtime in this folder unless it is up to date, and run the plugin there. */
    @Option(names = "--images-runtime", hidden = true)
    Path imagesRuntime;

    @Option(names = "--jar", hidden = true, defaultValue = "device-plugin/target/hetgpu-device-plugin.jar")
    Path jarPath;

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        BenchCommandLine.run(new RegistrationBenchmark(), args);
    }

    @Override
    public Integer call() throws Exception {
        BenchCommandLine.require(spec, restarts >= 0, "RESTARTS must be 0 or more, got " + restarts);
        BenchCommandLine.require(spec, settleSeconds >= 2, "--settle must be at least 2 seconds (CPU is read over its second half), got "
                + settleSeconds);
        BenchCommandLine.require(spec, apiServer == null || !noApiServer, "--api-server " + apiServer + " and --no-api-server: give one");
        BenchCommandLine.require(spec, apiServer == null || apiServer.matches("https?://[^/\\s]+/?"),
                "--api-server: expected the API server's URL, such as https://10.96.0.1:443, got \"" + apiServer + "\"");
        BenchCommandLine.require(spec, !standInDriver || gpuSource.equals("nvml"), "--stand-in-driver stands in for NVML: it needs "
                + "--gpu-source nvml, got " + gpuSource);
        BenchCommandLine.require(spec, List.of("device-plugin", "dra", "both").contains(kubeletApi),
                "--kubelet-api: expected device-plugin, dra or both, got \"" + kubeletApi + "\"");
        BenchCommandLine.require(spec, !kubeletApi.equals("dra") || (apiServer == null && !noApiServer), "--kubelet-api dra publishes "
                + "ResourceSlices to the stand-in API server: drop " + (noApiServer ? "--no-api-server" : "--api-server"));
        BenchCommandLine.require(spec, runtime == null || Files.isExecutable(runtime.resolve("bin/java")),
                "--runtime " + runtime + ": no bin/java there");
        var jar = jarPath.toAbsolutePath();
        var settle = Duration.ofSeconds(settleSeconds);
        boolean publish = !noApiServer;
        String apiServer = this.apiServer;
        var shipped = ShippedJvm.read(Path.of("device-plugin/Dockerfile"), Path.of("manifests/base/device-plugin.yaml"));
        if (javaToolOptions != null) {
            shipped = new ShippedJvm(shipped.entrypointOptions(), javaToolOptions, shipped.mallocArenaMax(), shipped.memoryLimitMiB(),
                    shipped.aotTraining(), shipped.draAotTraining());
        }
        System.out.println("machine: " + MachineLoad.processor());
        var temp = Files.createTempDirectory("hetgpu-bench");
        if (runtime == null && imagesRuntime != null) {
            runtime = ImagesRuntime.madeIn(imagesRuntime);
        }
        var javaHome = runtime == null ? Path.of(System.getProperty("java.home")) : runtime;
        var java = javaHome.resolve("bin/java").toString();
        System.out.println("plugin runtime: " + javaHome + (runtime == null ? " (this JVM's)" : ""));
        var cache = kubeletApi.equals("dra") ? null : makeCache(shipped.aotTraining(), java, jar, temp);
        var draCache = kubeletApi.equals("device-plugin") ? null : makeCache(shipped.draAotTraining(), java, jar, temp);
        Map<String, String> runtimeEnv = Map.of();
        if (standInDriver) {
            var driver = StandInDriver.build(Path.of(""), Files.createDirectory(temp.resolve("stand-in-driver")));
            runtimeEnv = Map.of("LD_LIBRARY_PATH", driver.toAbsolutePath().toString());
            System.out.println("NVIDIA driver: the stand-in built from " + StandInDriver.SOURCE + " (" + driver.toAbsolutePath() + ")");
        }
        StandInApiServer standIn = null;
        try {
            if (publish && apiServer == null) {
                standIn = StandInApiServer.started(Files.createDirectory(temp.resolve("api-server")), "gpu-1");
                apiServer = standIn.url();
            }
            var launch = new Launch(shipped, javaHome, jar, gpuSource, runtimeEnv, publish ? apiServer : null, restarts, settle, standIn);
            if (!kubeletApi.equals("dra")) {
                launch.measure("without the AOT cache", null, temp.resolve("without"));
                launch.measure("with the image's AOT cache", cache, temp.resolve("with"));
            }
            if (!kubeletApi.equals("device-plugin")) {
                if (this.apiServer != null || noApiServer) {
                    System.out.printf("%n== DRA driver: not measured (it publishes to the stand-in API server only)%n");
                } else {
                    launch.measureDra("DRA driver, without the AOT cache", null, temp.resolve("dra-without"));
                    launch.measureDra("DRA driver, with the image's AOT cache of the DRA driver", draCache, temp.resolve("dra-with"));
                }
            }
        } finally {
            if (standIn != null) {
                standIn.close();
            }
        }
        return 0;
    }

    /**
     * A cache the image build makes, made the same way: the Dockerfile's training run (its trainer, with a stand-in API
     * server over TLS and a stand-in kubelet, its options and simulated GPUs, stopped with SIGTERM once the plugin has
     * gone through its start: as a device plugin, registered and its Node published; as the DRA driver, registered, its
     * ResourceSlice published and a claim prepared and unprepared).
     */
    private static Path makeCache(ShippedJvm.AotTraining training, String java, Path jar, Path temp) throws IOException, InterruptedException {
        var name = Path.of(training.cache()).getFileName().toString();
        var cache = temp.resolve(name);
        var log = temp.resolve(name + ".training.log");
        var launch = new ProcessBuilder(training.command(java, jar, cache)).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        // As in the image build: no JVM options but the run's own.
        launch.environment().remove("JAVA_TOOL_OPTIONS");
        var trainer = launch.start();
        // The trainer bounds its own wait (its --patience, then as long again for the cache to be written); this only
        // keeps a hung trainer from hanging the benchmark.
        if (!trainer.waitFor(10, TimeUnit.MINUTES)) {
            trainer.destroyForcibly();
        }
        if (trainer.waitFor() != 0 || !Files.exists(cache)) {
            throw new IllegalStateException("the training run wrote no AOT cache (exit " + trainer.exitValue() + "); see " + log);
        }
        System.out.printf("AOT cache made by the image build's training run%s: %.1f MiB (%s)%n", training.dra() ? " of the DRA driver" : "",
                Files.size(cache) / (1024.0 * 1024), cache);
        return cache;
    }

    /** One way of launching the shipped jar against the kubelet stand-in, measured from launch to exit. */
    /** @param runtimeEnv what the container runtime adds to the plugin's environment (the stand-in driver's folder) */
    private record Launch(ShippedJvm shipped, Path javaHome, Path jar, String gpuSource, Map<String, String> runtimeEnv, String apiServer,
                          int restarts, Duration settle, StandInApiServer standIn) {

        /** @param cache the AOT cache to start with, or null for none */
        void measure(String label, Path cache, Path dir) throws Exception {
            var folder = Files.createDirectories(dir.resolve("device-plugins"));
            var podResources = dir.resolve("pod-resources.sock");
            var command = new ArrayList<>(shipped.command(javaHome.resolve("bin/java").toString(), jar));
            if (cache != null) {
                command.add(1, ShippedJvm.CACHE_OPTION + cache);
            }
            System.out.printf("%n== %s%nplugin JVM (java %d): %s, JAVA_TOOL_OPTIONS=\"%s\"%n", label, Runtime.version().feature(),
                    String.join(" ", command.subList(1, command.size() - 2)), shipped.javaToolOptions()
                            + (shipped.mallocArenaMax() == null ? "" : "\", MALLOC_ARENA_MAX=" + shipped.mallocArenaMax()));
            try (var kubelet = new KubeletStandIn(folder, podResources).start()) {
                command.addAll(List.of("--gpu-source", gpuSource, "--publish-node-inventory", Boolean.toString(apiServer != null),
                        "--node-name", "gpu-1", "--device-plugin-dir", folder.toString(), "--pod-resources-socket", podResources.toString(),
                        "--http-port", "0"));
                var launch = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("plugin.log").toFile());
                if (apiServer != null) {
                    // fabric8's client reads these; no kubeconfig, so nothing of the caller's own cluster is used.
                    launch.environment().remove("KUBERNETES_MASTER");
                    launch.environment().put("KUBECONFIG", dir.resolve("no-kubeconfig").toString());
                    if (standIn != null) {
                        // As a pod: the address kubelet gives it, the certificate checked against the cluster's CA.
                        launch.environment().putAll(standIn.podEnvironment());
                    } else {
                        // Not a pod's address, which fabric8 would take over this one when the benchmark runs in a pod.
                        launch.environment().remove("KUBERNETES_SERVICE_HOST");
                        launch.environment().remove("KUBERNETES_SERVICE_PORT");
                        launch.environment().put("KUBERNETES_MASTER", apiServer);
                        launch.environment().put("KUBERNETES_TRUST_CERTIFICATES", "true");
                    }
                }
                launch.environment().put("JAVA_TOOL_OPTIONS", shipped.javaToolOptions());
                launch.environment().putAll(runtimeEnv);
                if (shipped.mallocArenaMax() != null) {
                    launch.environment().put("MALLOC_ARENA_MAX", shipped.mallocArenaMax());
                }
                var interval = MachineLoad.start();
                long launched = System.nanoTime();
                var plugin = launch.start();
                var first = firstRegistration(plugin, kubelet, dir.resolve("plugin.log"), Duration.ofSeconds(10));
                System.out.printf("process launch -> Register received: %d ms (%s as %s; load %s, steal %s)%n",
                        (System.nanoTime() - launched) / 1_000_000, first.getResourceName(), first.getEndpoint(), MachineLoad.loadAverage(),
                        interval.steal());

                List<Long> again = new ArrayList<>();
                for (int i = 0; i < restarts; i++) {
                    long restarted = System.nanoTime();
                    kubelet.restart();
                    kubelet.nextRegistration();
                    again.add((System.nanoTime() - restarted) / 1_000_000);
                }
                System.out.printf("kubelet restart (sockets deleted) -> Register received again, %d rounds: %s ms (load %s)%n", restarts,
                        again, MachineLoad.loadAverage());

                // Steady state: let it serve ListAndWatch and poll PodResources a few times before reading its memory.
                // CPU is read over the second half only: the first holds the inventory's first publishing and warm-up.
                settleFor(plugin, settle.dividedBy(2), dir);
                long cpuBefore = cpuMillis(plugin.pid());
                settleFor(plugin, settle.dividedBy(2), dir);
                var status = ProcessStatus.of(plugin.pid());
                System.out.printf("RSS after registration: %.1f MiB (peak %.1f MiB) with the manifest's JVM options, %d s later (limit %d Mi; load %s; %s)%n",
                        status.mib("VmRSS"), status.mib("VmHWM"), settle.toSeconds(), shipped.memoryLimitMiB(), MachineLoad.loadAverage(),
                        apiServer == null ? "not publishing the node inventory: no API server" : publishing(apiServer, dir.resolve("plugin.log")));
                System.out.printf("  resident, MiB: %s%n", ResidentMemory.of(plugin.pid(), cache, javaHome.toRealPath()));

                System.out.printf("CPU once settled: %d ms in the last %d s (load %s)%n", cpuMillis(plugin.pid()) - cpuBefore,
                        settle.toSeconds() / 2, MachineLoad.loadAverage());
                if (standIn != null) {
                    System.out.printf("hetgpu.io keys the plugin wrote on the stand-in's Node: %d%n", standIn.nodeLabelsAndAnnotations().keySet().stream()
                            .filter(key -> key.startsWith("hetgpu.io/")).count());
                }
                long term = System.nanoTime();
                plugin.destroy(); // SIGTERM
                int code = plugin.waitFor();
                System.out.printf("SIGTERM -> exit %d in %d ms (load %s); plugin socket left behind: %s%n", code,
                        (System.nanoTime() - term) / 1_000_000, MachineLoad.loadAverage(), Files.exists(folder.resolve(first.getEndpoint())));
                System.out.println("plugin log: " + dir.resolve("plugin.log"));
            }
        }

        /**
         * What a slice says of each GPU, one line each, as a claim's selectors read it: on NVML, what the driver reported
         * through the published attributes.
         */
        static String publishedDevices(JsonNode slice) {
            var text = new StringBuilder("ResourceSlice " + slice.at("/metadata/name").asText() + ", pool "
                    + slice.at("/spec/pool/name").asText() + " generation " + slice.at("/spec/pool/generation").asLong() + ":\n");
            for (var device : slice.at("/spec/devices")) {
                var fields = new ArrayList<String>();
                device.path("attributes").properties().forEach(attribute -> fields.add(attribute.getKey() + "="
                        + attribute.getValue().properties().iterator().next().getValue().asText()));
                device.path("capacity").properties().forEach(capacity -> fields.add(capacity.getKey() + "="
                        + capacity.getValue().path("value").asText()));
                device.path("taints").forEach(taint -> fields.add("taint " + taint.path("key").asText() + ":" + taint.path("effect").asText()));
                text.append("  ").append(device.path("name").asText()).append(": ").append(String.join(", ", fields)).append('\n');
            }
            return text.toString();
        }

        /**
         * The jar as hetgpu's DRA driver: a stand-in API server of its own (a slice the last run left would be adopted,
         * not created), kubelet's plugin watcher stood in for, from launch to the registration socket answered and to the
         * ResourceSlice created; then RSS, CPU and SIGTERM as in {@link #measure}.
         */
        void measureDra(String label, Path cache, Path dir) throws Exception {
            var registry = Files.createDirectories(dir.resolve("plugins_registry"));
            var plugins = Files.createDirectories(dir.resolve("plugins"));
            var cdi = Files.createDirectories(dir.resolve("cdi"));
            var log = dir.resolve("plugin.log");
            var command = new ArrayList<>(shipped.command(javaHome.resolve("bin/java").toString(), jar));
            if (cache != null) {
                command.add(1, ShippedJvm.CACHE_OPTION + cache);
            }
            System.out.printf("%n== %s%nplugin JVM (java %d): %s, JAVA_TOOL_OPTIONS=\"%s\"%n", label, Runtime.version().feature(),
                    String.join(" ", command.subList(1, command.size() - 2)), shipped.javaToolOptions());
            command.addAll(List.of("--kubelet-api", "dra", "--gpu-source", gpuSource, "--node-name", "gpu-1", "--plugin-registry-dir",
                    registry.toString(), "--dra-plugin-dir", plugins.toString(), "--cdi-dir", cdi.toString(), "--http-port", "0"));
            try (var api = StandInApiServer.started(Files.createDirectories(dir.resolve("api-server")), "gpu-1");
                 var transport = new UnixSocketTransport()) {
                var launch = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
                launch.environment().remove("KUBERNETES_MASTER");
                launch.environment().put("KUBECONFIG", dir.resolve("no-kubeconfig").toString());
                launch.environment().putAll(api.podEnvironment());
                launch.environment().put("JAVA_TOOL_OPTIONS", shipped.javaToolOptions());
                launch.environment().putAll(runtimeEnv);
                if (shipped.mallocArenaMax() != null) {
                    launch.environment().put("MALLOC_ARENA_MAX", shipped.mallocArenaMax());
                }
                // Timed where the stand-in completes it, not where this thread next looks.
                var slicePublished = api.slicePublished().thenApply(published -> System.nanoTime());
                var interval = MachineLoad.start();
                long launched = System.nanoTime();
                var plugin = launch.start();
                var socket = registry.resolve(HetgpuDra.DRIVER + "-reg.sock");
                long registered = PluginWatcher.register(transport, socket, plugin, log, Duration.ofSeconds(10));
                long published;
                try {
                    published = slicePublished.get(10, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    plugin.destroyForcibly().waitFor();
                    throw new IllegalStateException("no ResourceSlice within 10 s of the registration; see " + log);
                }
                System.out.printf("process launch -> registered with kubelet's plugin watcher: %d ms; -> ResourceSlice published: %d ms "
                        + "(load %s, steal %s)%n", (registered - launched) / 1_000_000, (published - launched) / 1_000_000,
                        MachineLoad.loadAverage(), interval.steal());
                api.slices().forEach(slice -> System.out.print(publishedDevices(slice)));

                settleFor(plugin, settle.dividedBy(2), dir);
                long cpuBefore = cpuMillis(plugin.pid());
                settleFor(plugin, settle.dividedBy(2), dir);
                var status = ProcessStatus.of(plugin.pid());
                System.out.printf("RSS once registered and published: %.1f MiB (peak %.1f MiB) with the manifest's JVM options, %d s later "
                        + "(limit %d Mi; load %s)%n", status.mib("VmRSS"), status.mib("VmHWM"), settle.toSeconds(), shipped.memoryLimitMiB(),
                        MachineLoad.loadAverage());
                System.out.printf("  resident, MiB: %s%n", ResidentMemory.of(plugin.pid(), cache, javaHome.toRealPath()));
                System.out.printf("CPU once settled: %d ms in the last %d s (load %s)%n", cpuMillis(plugin.pid()) - cpuBefore,
                        settle.toSeconds() / 2, MachineLoad.loadAverage());
                long term = System.nanoTime();
                plugin.destroy(); // SIGTERM
                int code = plugin.waitFor();
                System.out.printf("SIGTERM -> exit %d in %d ms (load %s); registration socket left behind: %s%n", code,
                        (System.nanoTime() - term) / 1_000_000, MachineLoad.loadAverage(), Files.exists(socket));
                System.out.println("plugin log: " + log);
            }
        }
    }

    /**
     * Whether the figures are those of a plugin that publishes, from its log: an API server that refuses it (a wrong
     * address, a certificate it does not trust) leaves a plugin that holds less than one that publishes.
     */
    static String publishing(String apiServer, Path log) throws IOException {
        // The plugin logs each change: the last of its two lines is how it stands.
        var last = Files.readAllLines(log).stream()
                .filter(line -> line.contains("Cannot publish the GPU inventory") || line.contains("Publishing the GPU inventory on node"))
                .reduce((first, later) -> later);
        if (last.isEmpty()) {
            return "publishing to " + apiServer + " not confirmed yet: the plugin logged neither success nor failure";
        }
        var line = last.get();
        return line.contains("Cannot publish")
                ? "NOT publishing to " + apiServer + ", the plugin logged: " + line.substring(line.indexOf("Cannot publish"))
                : "publishing the node inventory to " + apiServer;
    }

    /**
     * The plugin's Register call; when none comes within {@code time}, why, from the plugin's log (on a machine without a
     * driver, {@code --gpu-source nvml} ends here, the log saying that NVML cannot be loaded).
     */
    static RegisterRequest firstRegistration(Process plugin, KubeletStandIn kubelet, Path log, Duration time)
            throws InterruptedException, IOException {
        var registration = kubelet.registrationWithin(time);
        if (registration.isPresent()) {
            return registration.get();
        }
        var how = plugin.isAlive() ? "the plugin did not register within " + time.toSeconds() + " s"
                : "the plugin exited with " + plugin.exitValue() + " before it registered";
        plugin.destroyForcibly().waitFor();
        var last = Files.readAllLines(log).reversed().stream().filter(line -> !line.isBlank()).findFirst().orElse("(its log is empty)");
        throw new IllegalStateException(how + ": " + last.strip() + " (" + log + ")");
    }

    private static void settleFor(Process plugin, Duration time, Path temp) throws InterruptedException {
        if (plugin.waitFor(time.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("the plugin exited with " + plugin.exitValue() + "; see " + temp.resolve("plugin.log"));
        }
    }

    /** User plus system CPU time of a process, from /proc/PID/stat (fields 14 and 15, in clock ticks of 10 ms). */
    private static long cpuMillis(long pid) throws IOException {
        var stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        // The command name (field 2) may hold spaces; the fields after it start past its closing parenthesis.
        var fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * 10;
    }
}
