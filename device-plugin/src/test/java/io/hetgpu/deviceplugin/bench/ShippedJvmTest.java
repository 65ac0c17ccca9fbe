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
    void readsTheEntrypointOptionsWithoutTheArchiveThatOnlyTheImageHas() {
        assertThat(shipped.entrypointOptions()).contains("--sun-misc-unsafe-memory-access=allow")
                .noneMatch(option -> option.startsWith("-XX:SharedArchiveFile="));
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
}
