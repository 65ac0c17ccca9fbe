package io.hetgpu.testcluster.shipped;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.hetgpu.testcluster.manifests.RenderedManifests;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.zip.ZipEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What is inside each shaded jar, and how it answers the two things a person types first: the
 * manifest names a main class the jar holds, every ServiceLoader registration names classes the jar
 * holds (fabric8 finds its HTTP client, gRPC its transport, slf4j its logger this way), nothing of
 * the tests rides along, and {@code --help} and a bad flag answer in a line or a page, never a trace.
 */
class ShippedJarContentsTest {

    /** The registrations without which a program starts but cannot do its job. */
    private static final Map<ShippedArtifacts, List<String>> NEEDED_SERVICES = Map.of(
            ShippedArtifacts.SCHEDULER_EXTENDER, List.of(
                    "io.fabric8.kubernetes.client.http.HttpClient$Factory",
                    "org.slf4j.spi.SLF4JServiceProvider"),
            ShippedArtifacts.DEVICE_PLUGIN, List.of(
                    "io.fabric8.kubernetes.client.http.HttpClient$Factory",
                    "org.slf4j.spi.SLF4JServiceProvider",
                    "io.grpc.ServerProvider",
                    "io.grpc.ManagedChannelProvider",
                    "io.grpc.NameResolverProvider",
                    "io.grpc.LoadBalancerProvider"));

    /**
     * fabric8's HTTP client in each jar: Vert.x (fabric8's default) in the extender, which serves HTTP with
     * Vert.x anyway; the JDK's own in the device plugin, which only reads and patches its Node and would
     * otherwise carry Vert.x and a second Netty in every GPU node's memory.
     */
    private static final Map<ShippedArtifacts, String> HTTP_CLIENT = Map.of(
            ShippedArtifacts.SCHEDULER_EXTENDER, "io.fabric8.kubernetes.client.vertx.VertxHttpClientFactory",
            ShippedArtifacts.DEVICE_PLUGIN, "io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory");

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(ShippedArtifacts.class)
    void theManifestNamesAMainClassTheJarHolds(ShippedArtifacts program) throws IOException {
        try (var jar = new JarFile(program.jar().toFile())) {
            Manifest manifest = jar.getManifest();
            assertThat(manifest.getMainAttributes().getValue("Main-Class")).isEqualTo(program.mainClass());
            assertThat(jar.getEntry(program.mainClass().replace('.', '/') + ".class")).isNotNull();
            // Shaded classes of several versions (Jackson, Netty) live under META-INF/versions.
            assertThat(manifest.getMainAttributes().getValue("Multi-Release")).isEqualTo("true");
            // A signature file of one shaded dependency would make the JVM reject the whole jar.
            assertThat(jar.stream().map(ZipEntry::getName)).noneMatch(name -> name.matches("META-INF/[^/]+\\.(SF|DSA|RSA)"));
        }
    }

    @ParameterizedTest
    @EnumSource(ShippedArtifacts.class)
    void everyServiceRegistrationNamesClassesTheJarHolds(ShippedArtifacts program) throws IOException {
        try (var jar = new JarFile(program.jar().toFile())) {
            var missing = new ArrayList<String>();
            var services = jar.stream().map(ZipEntry::getName)
                    .filter(name -> name.startsWith("META-INF/services/") && !name.endsWith("/")).toList();
            for (var file : services) {
                var service = file.substring("META-INF/services/".length());
                // A registration for an interface the jar lacks can never be loaded: harmless leftovers of shading.
                if (!holds(jar, service)) {
                    continue;
                }
                for (var provider : providers(jar.getInputStream(jar.getEntry(file)))) {
                    if (!holds(jar, provider)) {
                        missing.add(service + " -> " + provider);
                    }
                }
            }
            assertThat(missing).as("ServiceLoader registrations whose class is not in %s", program.jar()).isEmpty();
            assertThat(services.stream().map(f -> f.substring("META-INF/services/".length())))
                    .containsAll(NEEDED_SERVICES.get(program));
            var httpClients = providers(jar.getInputStream(jar.getEntry("META-INF/services/io.fabric8.kubernetes.client.http.HttpClient$Factory")));
            assertThat(httpClients).as("fabric8's HTTP client").containsExactly(HTTP_CLIENT.get(program));
        }
    }

    @ParameterizedTest
    @EnumSource(ShippedArtifacts.class)
    void nothingOfTheTestsShips(ShippedArtifacts program) throws IOException {
        try (var jar = new JarFile(program.jar().toFile())) {
            assertThat(jar.stream().map(ZipEntry::getName))
                    .noneMatch(name -> name.startsWith("org/junit/") || name.startsWith("org/assertj/")
                            || name.startsWith("org/awaitility/") || name.startsWith("io/fabric8/mockwebserver/")
                            || name.startsWith("io/fabric8/kubernetes/client/server/mock/"));
        }
    }

    @ParameterizedTest
    @EnumSource(ShippedArtifacts.class)
    void helpExitsZeroAndABadFlagIsOneLine(ShippedArtifacts program) {
        var help = JarProcess.start(program.jar(), program.dockerJvmOptions(), List.of("--help"), Map.of(), dir.resolve("help.log"));
        assertThat(help.await(30)).as(help::describe).isZero();
        assertThat(help.output()).as(help::describe).contains("Usage: hetgpu-").contains("--help").doesNotContain("WARNING");

        var bad = JarProcess.start(program.jar(), program.dockerJvmOptions(), List.of("--no-such-flag=1"), Map.of(), dir.resolve("bad.log"));
        assertThat(bad.await(30)).as(bad::describe).isEqualTo(2);
        assertThat(bad.output().strip().lines()).as(bad::describe).hasSize(1)
                .allSatisfy(line -> assertThat(line).startsWith("hetgpu-").contains("--no-such-flag"));
    }

    /**
     * Of JavaCPP's CUDA presets the plugin ships the NVML binding alone (the rest is 30 MB it never calls), and every
     * type that binding's methods and fields name is in the jar: a class trimmed by mistake would fail only on a GPU
     * node, at the first NVML call that names it. Loaded without initialising, so no native library is touched.
     */
    @Test
    void thePluginShipsTheNvmlBindingWholeAndNothingElseOfCuda() throws Exception {
        var jarPath = ShippedArtifacts.DEVICE_PLUGIN.jar();
        List<String> cudaClasses;
        try (var jar = new JarFile(jarPath.toFile())) {
            var names = jar.stream().map(ZipEntry::getName).filter(name -> name.startsWith("org/bytedeco/cuda/") && !name.endsWith("/")).toList();
            assertThat(names).contains("org/bytedeco/cuda/global/nvml.class", "org/bytedeco/cuda/presets/nvml.class",
                    "org/bytedeco/cuda/linux-x86_64/libjninvml.so");
            assertThat(names).as("CUDA files besides the NVML binding").allMatch(name -> name.startsWith("org/bytedeco/cuda/nvml/")
                    || name.startsWith("org/bytedeco/cuda/global/nvml") || name.startsWith("org/bytedeco/cuda/presets/nvml")
                    || name.startsWith("org/bytedeco/cuda/presets/cudart") || name.equals("org/bytedeco/cuda/linux-x86_64/libjninvml.so"));
            cudaClasses = names.stream().filter(name -> name.endsWith(".class"))
                    .map(name -> name.substring(0, name.length() - ".class".length()).replace('/', '.')).toList();
        }
        try (var loader = new URLClassLoader(new URL[] {jarPath.toUri().toURL()}, ClassLoader.getPlatformClassLoader())) {
            for (var name : cudaClasses) {
                var type = Class.forName(name, false, loader);
                // Resolving the signatures loads every type they name.
                assertThat(type.getDeclaredMethods()).as(name).isNotNull();
                assertThat(type.getDeclaredFields()).as(name).isNotNull();
            }
        }
    }

    /** What an admin sees when the ConfigMap holds mistakes: every one of them, on one line, and exit 2. */
    @Test
    void theExtenderRefusesABadConfigFileWithOneLineNamingEveryBadField() throws IOException {
        var config = Files.writeString(dir.resolve("extender.yaml"), """
                version: v1
                port: 70000
                policy:
                  weights: {tier: 4, nvlnk: 3}
                  highPriorityReserve: lots
                """);
        var extender = ShippedArtifacts.SCHEDULER_EXTENDER;
        var run = JarProcess.start(extender.jar(), extender.dockerJvmOptions(), List.of("--config", config.toString(), "--kubeconfig", "none"),
                Map.of(), dir.resolve("config.log"));
        assertThat(run.await(30)).as(run::describe).isEqualTo(2);
        assertThat(run.output().strip().lines()).as(run::describe).singleElement().satisfies(line -> assertThat(line)
                .contains(config + ": 3 invalid fields")
                .contains("port: expected 0..65535, got 70000")
                .contains("policy.weights.nvlnk: no scorer of that name")
                .contains("policy.highPriorityReserve: expected an integer, got \"lots\""));

        var unversioned = Files.writeString(dir.resolve("old.yaml"), "port: 8888\nweights: {tier: 4}\n");
        var old = JarProcess.start(extender.jar(), extender.dockerJvmOptions(), List.of("--config", unversioned.toString(), "--kubeconfig", "none"),
                Map.of(), dir.resolve("old.log"));
        assertThat(old.await(30)).as(old::describe).isEqualTo(2);
        assertThat(old.output().strip().lines()).as(old::describe).singleElement()
                .satisfies(line -> assertThat(line).contains("version: missing").contains("version: v1").contains("under \"policy:\""));
    }

    /**
     * An AOT cache holds objects in one header layout; made with another than the ENTRYPOINT runs with (the DRA
     * DaemonSet's command is the ENTRYPOINT with its own cache), the JVM refuses it and the plugin starts slower with
     * more memory.
     */
    @Test
    void thePluginsAotCacheIsTrainedWithTheHeaderLayoutItIsUsedWith() {
        var plugin = ShippedArtifacts.DEVICE_PLUGIN;
        var trainings = plugin.trainingRuns();
        assertThat(trainings).as("%s: the AOT cache training runs, one per kubelet API", plugin.dockerfile()).hasSize(2);
        assertThat(plugin.entrypoint()).as("%s: the ENTRYPOINT uses the cache", plugin.dockerfile())
                .anyMatch(word -> word.startsWith("-XX:AOTCache=/opt/hetgpu/"));
        for (var training : trainings) {
            assertThat(headerLayout(List.of(training.split("\\s+")))).as("%s: the training run's header layout", plugin.dockerfile())
                    .isEqualTo(headerLayout(plugin.entrypoint())).isNotEmpty();
        }
    }

    /**
     * The DRA driver runs the image's ENTRYPOINT with the AOT cache trained in DRA mode: the same JVM options and jar, the
     * cache a training run of the Dockerfile makes with {@code --kubelet-api=dra} (the device plugin's would leave the
     * driver's classes out of the cache and cost it memory). The chart renders the same container (DraInstallTest).
     */
    @Test
    void theDraDriverRunsTheEntrypointWithTheCacheTrainedAsADraDriver() {
        var plugin = ShippedArtifacts.DEVICE_PLUGIN;
        var draCache = "-XX:AOTCache=/opt/hetgpu/hetgpu-dra.aot";
        var expected = plugin.entrypoint().stream().map(word -> word.startsWith("-XX:AOTCache=") ? draCache : word).toList();
        var container = RenderedManifests.draInstall().stream().filter(o -> o instanceof DaemonSet d
                && d.getMetadata().getName().equals("hetgpu-device-plugin")).map(o -> ((DaemonSet) o).getSpec().getTemplate().getSpec()
                .getContainers().getFirst()).findFirst().orElseThrow();

        assertThat(plugin.entrypoint()).as("the Dockerfile's ENTRYPOINT names the device plugin's cache")
                .contains("-XX:AOTCache=/opt/hetgpu/hetgpu-device-plugin.aot");
        assertThat(container.getCommand()).isEqualTo(expected);
        assertThat(plugin.trainingRuns()).filteredOn(run -> run.contains("-XX:AOTCacheOutput=/opt/hetgpu/hetgpu-dra.aot"))
                .as("a training run makes the DRA driver's cache, in DRA mode").singleElement()
                .satisfies(run -> assertThat(run).contains("--kubelet-api=dra"));
    }

    /** The option a cache must be made and used with alike: the object header layout (the collector may differ). */
    private static List<String> headerLayout(List<String> words) {
        return words.stream().filter(word -> word.matches("-XX:[+-]UseCompactObjectHeaders")).toList();
    }

    private static boolean holds(JarFile jar, String className) {
        return jar.getEntry(className.replace('.', '/') + ".class") != null;
    }

    private static List<String> providers(InputStream in) throws IOException {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
                    .map(line -> line.replaceAll("#.*", "").strip())
                    .filter(line -> !line.isEmpty())
                    .toList();
        }
    }
}
