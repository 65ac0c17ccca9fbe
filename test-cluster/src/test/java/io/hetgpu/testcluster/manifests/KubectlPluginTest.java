package io.hetgpu.testcluster.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.testcluster.cluster.ProjectFiles;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/kubectl-hetgpu} through the real kubectl, as a pod author runs it with the folder on PATH: kubectl lists it
 * among its plugins and hands it every argument after its name. The plugin runs the launcher of its checkout, which here
 * is a stand-in that says what it was given (the real one builds and runs {@code hetgpu explain}, which the explain tests
 * run in process).
 */
class KubectlPluginTest {

    @TempDir
    Path checkout;

    private Map<String, String> environment;

    @BeforeEach
    void pluginOnPath() throws Exception {
        var bin = Files.createDirectories(checkout.resolve("bin"));
        Files.copy(ProjectFiles.manifests().resolveSibling("bin").resolve("kubectl-hetgpu"), bin.resolve("kubectl-hetgpu"));
        Files.writeString(checkout.resolve("hetgpu"), """
                #!/usr/bin/env bash
                echo "launcher: $* (named ${HETGPU_COMMAND:-})"
                exit 3
                """);
        for (var file : List.of(bin.resolve("kubectl-hetgpu"), checkout.resolve("hetgpu"))) {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        environment = Map.of("PATH", bin + File.pathSeparator + System.getenv("PATH"));
    }

    @Test
    void kubectlListsThePlugin() {
        var listed = Kubectl.withEnvironment(List.of("plugin", "list"), environment);

        assertThat(listed.stdout()).contains(checkout.resolve("bin").resolve("kubectl-hetgpu").toString());
    }

    @Test
    void kubectlHetgpuExplainRunsTheLaunchersExplainWithEveryArgumentAndItsExitCode() {
        var explained = Kubectl.withEnvironment(List.of("hetgpu", "explain", "-f", "job.yaml", "--output", "json"), environment);

        assertThat(explained.stdout()).isEqualTo("launcher: explain -f job.yaml --output json (named kubectl hetgpu)\n");
        assertThat(explained.exitCode()).isEqualTo(3);
    }

    @Test
    void kubectlHetgpuThroughputsRunsTheLaunchersThroughputsWithEveryArgumentAndItsExitCode() {
        var shown = Kubectl.withEnvironment(List.of("hetgpu", "throughputs", "-n", "gpu-ops", "-o", "json"), environment);

        assertThat(shown.stdout()).isEqualTo("launcher: throughputs -n gpu-ops -o json (named kubectl hetgpu)\n");
        assertThat(shown.exitCode()).isEqualTo(3);
    }

    @Test
    void kubectlHetgpuHelpSaysWhatItDoesWithoutStartingAnything() {
        var help = Kubectl.withEnvironment(List.of("hetgpu", "--help"), environment);

        assertThat(help.exitCode()).isZero();
        assertThat(help.stdout()).startsWith("Usage: kubectl hetgpu COMMAND [ARGS]").contains("explain", "throughputs").doesNotContain("launcher:");
    }

    @Test
    void anUnknownCommandIsRefusedNamingIt() {
        var unknown = Kubectl.withEnvironment(List.of("hetgpu", "explian"), environment);

        assertThat(unknown.exitCode()).isEqualTo(2);
        assertThat(unknown.stderr()).startsWith("kubectl hetgpu: unknown command \"explian\"");
    }
}
