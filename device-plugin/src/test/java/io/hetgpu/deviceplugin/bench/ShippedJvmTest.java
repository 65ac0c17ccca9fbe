package io.hetgpu.deviceplugin.bench;

import io.hetgpu.deviceplugin.training.AotTrainingRun;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The registration benchmark measures the JVM that ships: it must find it in the shipped files. */
class ShippedJvmTest {

    private final ShippedJvm shipped = ShippedJvm.read(Path.of("Dockerfile"), Path.of("../manifests/base/device-plugin.yaml"));

    ShippedJvmTest() throws Exception {
    }

    @Test
    void readsTheEntrypointOptionsWithoutTheCacheThatOnlyTheImageHas() {
        assertThat(shipped.entrypointOptions()).contains("--sun-misc-unsafe-memory-access=allow")
                .noneMatch(option -> option.startsWith(ShippedJvm.CACHE_OPTION));
        assertThat(shipped.command("java", Path.of("plugin.jar")))
                .startsWith("java", "-XX:MaxRAM=" + shipped.memoryLimitMiB() + "m")
                .endsWith("-jar", "plugin.jar");
    }

    @Test
    void readsTheManifestsJvmOptionsAndLimit() {
        assertThat(shipped.javaToolOptions()).contains("-XX:+ExitOnOutOfMemoryError", "-Xmx", "-Djava.io.tmpdir=/tmp");
        assertThat(shipped.mallocArenaMax()).isEqualTo("2");
        assertThat(shipped.memoryLimitMiB()).isEqualTo(256);
    }

    @Test
    void readsTheImageBuildsTrainingRunsWithTheirPathsMovable() {
        for (var training : List.of(shipped.aotTraining(), shipped.draAotTraining())) {
            readsWithPathsMovable(training);
        }
    }

    private void readsWithPathsMovable(ShippedJvm.AotTraining training) {
        assertThat(training.options()).anyMatch(option -> option.startsWith("-XX:AOTCacheOutput="));
        var command = training.command("java", Path.of("plugin.jar"), Path.of("/tmp/x/plugin.aot"));
        // The trainer, from the jar, stands an API server up for the plugin to publish to, so it loads what a pod loads.
        assertThat(command).containsSubsequence("java", "-cp", "plugin.jar", AotTrainingRun.class.getName(), "--",
                        "-XX:AOTCacheOutput=/tmp/x/plugin.aot", "-jar", "plugin.jar")
                .noneMatch(word -> word.startsWith("/opt/"));
        // It stops the plugin once the plugin has gone through its start, however long the build machine takes, not after a
        // fixed time, within which a slow machine's plugin may have published nothing.
        assertThat(training.trainer()).anyMatch(word -> word.matches("--patience=[0-9]+"));
        // The cache is made with the header layout the ENTRYPOINT runs with, or the JVM refuses it.
        assertThat(training.options()).containsAll(shipped.entrypointOptions().stream()
                .filter(option -> option.matches("-XX:[+-]UseCompactObjectHeaders")).toList());
    }

    /**
     * The JVM loads every class of the cache at start, so a training run that loads classes the pod does not (another
     * collector, JIT compilers, Netty's pooled buffers) costs the pod memory: each of its options is an AOT option,
     * or the ENTRYPOINT's, or the DaemonSet's.
     */
    @Test
    void trainsTheCacheWithTheOptionsThePodRunsWith() {
        var podOptions = List.of(shipped.javaToolOptions().split("\\s+"));
        for (var training : List.of(shipped.aotTraining(), shipped.draAotTraining())) {
            assertThat(training.options())
                    .filteredOn(option -> !option.matches("-XX:[+-]?(AOT\\w*|UnlockDiagnosticVMOptions)(=.*)?"))
                    .isNotEmpty()
                    .allSatisfy(option -> assertThat(option).as("a training option the pod does not run with")
                            .isIn(concat(shipped.entrypointOptions(), podOptions)));
            assertThat(training.options()).as("the options that decide which classes load")
                    .contains("-Xint", "-XX:+UseSerialGC", "-Dio.grpc.netty.shaded.io.netty.allocator.type=unpooled");
        }
    }

    /**
     * The DRA driver's cache is trained as the device plugin's is, in DRA mode, into a file of its own: a JVM takes one
     * cache and loads all of it, so neither mode pays for the other's classes.
     */
    @Test
    void trainsTheDraDriversCacheLikeTheDevicePluginsIntoAFileOfItsOwn() {
        var plugin = shipped.aotTraining();
        var dra = shipped.draAotTraining();
        assertThat(plugin.dra()).isFalse();
        assertThat(dra.dra()).isTrue();
        assertThat(dra.cache()).isNotEqualTo(plugin.cache()).startsWith("/opt/hetgpu/").endsWith(".aot");
        assertThat(dra.trainer()).isEqualTo(plugin.trainer());
        assertThat(dra.options().stream().map(option -> option.replace(dra.cache(), plugin.cache())).toList()).isEqualTo(plugin.options());
        assertThat(dra.arguments().stream().filter(argument -> !argument.equals("--kubelet-api=dra")).toList()).isEqualTo(plugin.arguments());
    }

    private static List<String> concat(List<String> first, List<String> second) {
        return java.util.stream.Stream.concat(first.stream(), second.stream()).toList();
    }
}
