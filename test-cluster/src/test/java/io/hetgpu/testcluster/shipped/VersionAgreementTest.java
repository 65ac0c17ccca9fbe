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

    @Test
    void theChangelogsNewestEntryIsIt() throws IOException {
        var firstEntry = Files.readAllLines(CHECKOUT.resolve("CHANGELOG.md")).stream().filter(l -> l.startsWith("## ")).findFirst();
        assertThat(firstEntry).contains("## " + revision());
    }
}
