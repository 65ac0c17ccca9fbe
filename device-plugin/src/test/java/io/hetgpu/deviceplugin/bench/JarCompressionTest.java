package io.hetgpu.deviceplugin.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JarCompressionTest {

    @TempDir
    Path folder;

    /** The GPU check's folder carries the plugin jar stored; deflated again there it must be the jar built. */
    @Test
    void aJarStoredAndDeflatedAgainIsTheJarItWasByteForByte() throws IOException {
        var built = folder.resolve("built.jar");
        var manifest = new Manifest();
        manifest.getMainAttributes().putValue("Manifest-Version", "1.0");
        manifest.getMainAttributes().putValue("Main-Class", "io.hetgpu.Example");
        try (var jar = new JarOutputStream(Files.newOutputStream(built), manifest)) {
            for (var name : List.of("io/", "io/hetgpu/", "io/hetgpu/Example.class", "META-INF/services/io.grpc.ManagedChannelProvider")) {
                var entry = new ZipEntry(name);
                entry.setTime(1_700_000_000_000L);
                jar.putNextEntry(entry);
                jar.write(("contents of " + name + " ").repeat(name.endsWith("/") ? 0 : 200).getBytes(StandardCharsets.UTF_8));
                jar.closeEntry();
            }
        }
        var stored = folder.resolve("stored.jar");
        var again = folder.resolve("again.jar");

        JarCompression.rewrite(built, stored, true);
        JarCompression.rewrite(stored, again, false);

        assertThat(methods(stored)).containsOnly(ZipEntry.STORED);
        assertThat(Files.size(stored)).isGreaterThan(Files.size(built));
        assertThat(names(stored)).isEqualTo(names(built));
        assertThat(again).hasSameBinaryContentAs(built);
    }

    private static List<Integer> methods(Path jar) throws IOException {
        try (var zip = new ZipFile(jar.toFile())) {
            return zip.stream().map(ZipEntry::getMethod).toList();
        }
    }

    private static List<String> names(Path jar) throws IOException {
        try (var zip = new ZipFile(jar.toFile())) {
            return new ArrayList<>(zip.stream().map(ZipEntry::getName).toList());
        }
    }
}
