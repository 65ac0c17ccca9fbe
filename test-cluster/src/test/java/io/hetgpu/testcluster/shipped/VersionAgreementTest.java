package io.hetgpu.testcluster.shipped;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.hetgpu.gpu.release.ReleaseVersion;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * hetgpu has one version, the root pom's {@code revision}: the jars' manifests and {@code -V}, the launcher's
 * {@code -V}, the chart's version and appVersion, the kustomize image tags and the CHANGELOG's newest entry all say it
 * (the images carry it too: ImagesTest).
 */
class VersionAgreementTest {

    private static final Path CHECKOUT = ShippedArtifacts.checkout();

    @TempDir
    Path dir;

    /** The one place: pom.xml's project/properties/revision. */
    static String revision() {
        try {
            var pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(CHECKOUT.resolve("pom.xml").toFile());
            var revision = pom.getElementsByTagName("revision");
            assertThat(revision.getLength()).as("pom.xml's <revision> elements").isEqualTo(1);
            return revision.item(0).getTextContent().strip();
        } catch (Exception e) {
            throw new AssertionError("cannot read the version from pom.xml", e);
        }
    }

    @Test
    void theBuildWroteTheRevisionIntoTheProgramsVersion() {
        assertThat(revision()).matches("[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?");
        assertThat(ReleaseVersion.current()).isEqualTo(revision());
    }

    @ParameterizedTest
    @EnumSource(ShippedArtifacts.class)
    void eachJarsManifestAndDashVSayIt(ShippedArtifacts program) throws IOException {
        try (var jar = new JarFile(program.jar().toFile())) {
            assertThat(jar.getManifest().getMainAttributes().getValue("Implementation-Version")).isEqualTo(revision());
        }
        var version = JarProcess.start(program.jar(), program.dockerJvmOptions(), List.of("-V"), Map.of(), dir.resolve("version.log"));
        assertThat(version.await(30)).as(version::describe).isZero();
        assertThat(version.output().strip()).isEqualTo("hetgpu-" + program.name().toLowerCase().replace('_', '-') + " " + revision());
    }

    @Test
    void theLaunchersDashVSaysIt() throws Exception {
        var process = new ProcessBuilder("bash", CHECKOUT.resolve("hetgpu").toString(), "-V").redirectErrorStream(true).start();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip()).isEqualTo("hetgpu " + revision());
        assertThat(new String(new ProcessBuilder("bash", CHECKOUT.resolve("hetgpu").toString(), "--version").start().getInputStream()
                .readAllBytes(), StandardCharsets.UTF_8).strip()).isEqualTo("hetgpu " + revision());
    }

    @Test
    void theChartAndTheKustomizeImagesSayIt() throws IOException {
        var yaml = new YAMLMapper();
        var chart = yaml.readTree(CHECKOUT.resolve("charts/hetgpu/Chart.yaml").toFile());
        assertThat(chart.path("version").asText()).isEqualTo(revision());
        assertThat(chart.path("appVersion").asText()).isEqualTo(revision());
        var images = yaml.readTree(CHECKOUT.resolve("manifests/images/kustomization.yaml").toFile()).path("images");
        var hetgpuTags = new java.util.ArrayList<String>();
        images.forEach(image -> {
            if (image.path("name").asText().startsWith("hetgpu/")) {
                hetgpuTags.add(image.path("newTag").asText());
            }
        });
        assertThat(hetgpuTags).hasSize(2).containsOnly(revision());
    }

    /** A release moves the version with one command: the pom, the chart and the kustomize tags, and nothing else. */
    @Test
    void versionSetToMovesEveryCopyAndRefusesANonSemVer() throws Exception {
        for (var file : List.of("hetgpu", "pom.xml", "charts/hetgpu/Chart.yaml", "manifests/images/kustomization.yaml")) {
            Files.createDirectories(dir.resolve(file).getParent());
            Files.copy(CHECKOUT.resolve(file), dir.resolve(file));
        }
        assertThat(launcher("version", "set-to", "2.0.0-rc.1").exitCode()).isZero();

        assertThat(launcher("-V").output()).isEqualTo("hetgpu 2.0.0-rc.1");
        var yaml = new YAMLMapper();
        var chart = yaml.readTree(dir.resolve("charts/hetgpu/Chart.yaml").toFile());
        assertThat(List.of(chart.path("version").asText(), chart.path("appVersion").asText())).containsOnly("2.0.0-rc.1");
        assertThat(Files.readString(dir.resolve("manifests/images/kustomization.yaml")))
                .doesNotContain("newTag: " + revision()).contains("newTag: 2.0.0-rc.1").contains("newTag: v1.37.1");

        var refused = launcher("version", "set-to", "two");
        assertThat(refused.exitCode()).isEqualTo(2);
        assertThat(refused.output()).contains("got \"two\"");
        assertThat(launcher("-V").output()).isEqualTo("hetgpu 2.0.0-rc.1");
    }

    private record Launched(int exitCode, String output) {
    }

    /** The copy of the launcher in the test's folder, which works on the copies beside it. */
    private Launched launcher(String... args) throws Exception {
        var command = new java.util.ArrayList<>(List.of("bash", dir.resolve("hetgpu").toString()));
        command.addAll(List.of(args));
        var process = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new Launched(process.exitValue(), new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip());
    }

    @Test
    void theChangelogsNewestEntryIsIt() throws IOException {
        var firstEntry = Files.readAllLines(CHECKOUT.resolve("CHANGELOG.md")).stream().filter(l -> l.startsWith("## ")).findFirst();
        assertThat(firstEntry).contains("## " + revision());
    }
}
