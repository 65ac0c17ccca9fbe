package io.hetgpu.deviceplugin.bench;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

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
    void readsTheImageBuildsTrainingRunWithItsPathsMovable() {
        var training = shipped.aotTraining();
        assertThat(training.options()).anyMatch(option -> option.startsWith("-XX:AOTCacheOutput="));
        var command = training.command("java", Path.of("plugin.jar"), Path.of("/tmp/x/plugin.aot"), Path.of("/tmp/x/sockets"));
        assertThat(command).contains("-XX:AOTCacheOutput=/tmp/x/plugin.aot", "--device-plugin-dir=/tmp/x/sockets")
                .containsSubsequence("java", "-jar", "plugin.jar").noneMatch(word -> word.startsWith("/opt/"));
        // The cache is made with the header layout the ENTRYPOINT runs with, or the JVM refuses it.
        assertThat(training.options()).containsAll(shipped.entrypointOptions().stream()
                .filter(option -> option.matches("-XX:[+-]UseCompactObjectHeaders")).toList());
    }
}
