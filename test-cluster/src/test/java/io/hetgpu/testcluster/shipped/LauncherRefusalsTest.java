package io.hetgpu.testcluster.shipped;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * `./hetgpu bench`, `./hetgpu images` and `./hetgpu gpu-check-bundle` refuse what they cannot run at once, before they
 * build anything: a benchmark's own options are read by the benchmark (its tests are beside it), the launcher only
 * picks which one runs.
 */
class LauncherRefusalsTest {

    private static final Path CHECKOUT = ShippedArtifacts.checkout();

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "bench extnder         | 2 | hetgpu: bench extnder: no such benchmark (allocator, registration, extender, bind, or all)",
            "bench all --seconds 3 | 2 | hetgpu: bench all takes no options; each benchmark has its own (./hetgpu bench NAME --help)",
            "images bogus          | 2 | hetgpu: images bogus: expected nothing or test (./hetgpu images [test])",
            "bench extender --floor | 2 | hetgpu: --floor needs a folder (the Go floor's main package)",
            "bench --help          | 0 | ./hetgpu bench [allocator|registration|extender|bind|all] [OPTIONS]: figures, not pass/fail"})
    void whatTheLauncherAnswersBeforeItBuildsAnything(String args, int exitCode, String output) throws Exception {
        var command = new ArrayList<>(List.of("bash", CHECKOUT.resolve("hetgpu").toString()));
        command.addAll(List.of(args.split(" ")));
        var process = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).isEqualTo(exitCode);
        assertThat(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).startsWith(output)
                .doesNotContain("building");
    }

    /** The GPU check's folder is made anew, so a folder the command did not make is refused, in the caller's folder. */
    @Test
    void aGpuCheckBundleIsNotWrittenOverAFolderOfOtherFiles(@TempDir Path caller) throws Exception {
        java.nio.file.Files.writeString(java.nio.file.Files.createDirectory(caller.resolve("notes")).resolve("mine.txt"), "keep me");

        var process = new ProcessBuilder("bash", CHECKOUT.resolve("hetgpu").toString(), "gpu-check-bundle", "notes")
                .directory(caller.toFile()).redirectErrorStream(true).start();

        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).isEqualTo(2);
        assertThat(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                .startsWith("hetgpu: gpu-check-bundle notes: " + caller.toRealPath().resolve("notes")
                        + " holds files this command did not make: give a new or empty folder")
                .doesNotContain("building");
        assertThat(caller.resolve("notes/mine.txt")).hasContent("keep me");
    }

    /** The launcher works from the checkout, but a folder the caller names is the caller's, as in any other command. */
    @Test
    void aRelativeFloorIsInTheCallersFolder(@TempDir Path caller) throws Exception {
        var process = new ProcessBuilder("bash", CHECKOUT.resolve("hetgpu").toString(), "bench", "extender", "--floor",
                "scheduler-extender/bench/extender-floor").directory(caller.toFile()).redirectErrorStream(true).start();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).isEqualTo(2);
        assertThat(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                .startsWith("hetgpu: --floor scheduler-extender/bench/extender-floor: no such folder ("
                        + caller.toRealPath().resolve("scheduler-extender/bench/extender-floor"))
                .doesNotContain("building");
    }
}
