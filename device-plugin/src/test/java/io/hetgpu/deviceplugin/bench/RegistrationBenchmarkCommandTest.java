package io.hetgpu.deviceplugin.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.bench.BenchCommandLine;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What `./hetgpu bench registration` answers to its arguments, before it starts anything. */
class RegistrationBenchmarkCommandTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "--settle abc          | Invalid value for option '--settle': 'abc' is not an int",
            "--bogus               | Unknown option: '--bogus'",
            "--settle              | Missing required parameter for option '--settle' (SECONDS)",
            "three                 | Invalid value for positional parameter at index 0 (RESTARTS): 'three' is not an int",
            "-1                    | RESTARTS must be 0 or more, got -1",
            "--settle 1            | --settle must be at least 2 seconds (CPU is read over its second half), got 1",
            "--api-server https://x --no-api-server | --api-server https://x and --no-api-server: give one",
            "--stand-in-driver     | --stand-in-driver stands in for NVML: it needs --gpu-source nvml, got simulated:dgx-a100",
            "--runtime /nonexistent | --runtime /nonexistent: no bin/java there",
            "--kubelet-api cri     | --kubelet-api: expected device-plugin, dra or both, got \"cri\"",
            "--kubelet-api dra --no-api-server | --kubelet-api dra publishes ResourceSlices to the stand-in API server: drop --no-api-server",
            "--api-server 10.96.0.1:443 | --api-server: expected the API server's URL, such as https://10.96.0.1:443, got \"10.96.0.1:443\""})
    void aWrongArgumentIsOneLineNamingItAndItsValue(String args, String message) {
        var answer = BenchCommandLine.answer(new RegistrationBenchmark(), args.split(" "));
        assertThat(answer.status()).isEqualTo(2);
        assertThat(answer.err()).isEqualTo("./hetgpu bench registration: " + message + " (see --help)" + System.lineSeparator());
        assertThat(answer.out()).isEmpty();
    }

    @Test
    void theDefaultsAreFiveRestartsTwelveSecondsTheShadedJarAndAStandIn() {
        var benchmark = new RegistrationBenchmark();
        BenchCommandLine.of(benchmark).parseArgs();
        assertThat(benchmark.restarts).isEqualTo(5);
        assertThat(benchmark.settleSeconds).isEqualTo(12);
        assertThat(benchmark.jarPath).isEqualTo(Path.of("device-plugin/target/hetgpu-device-plugin.jar"));
        assertThat(benchmark.apiServer).isNull();
        assertThat(benchmark.noApiServer).isFalse();
        assertThat(benchmark.gpuSource).isEqualTo("simulated:dgx-a100");
        assertThat(benchmark.runtime).as("this JVM's runtime; the launcher names the images'").isNull();
        assertThat(benchmark.kubeletApi).as("the device plugin, then the DRA driver, in one report").isEqualTo("both");
    }

    @Test
    void helpListsEveryOptionButTheLaunchersOwn() {
        var answer = BenchCommandLine.answer(new RegistrationBenchmark(), "--help");
        assertThat(answer.status()).isZero();
        assertThat(answer.out()).contains("[RESTARTS]", "--settle=SECONDS", "--java-tool-options=OPTIONS", "--api-server=URL",
                "--no-api-server", "--gpu-source=SOURCE", "--kubelet-api=device-plugin|dra|both", "--stand-in-driver", "--runtime=JAVA_HOME").doesNotContain("--jar");
    }
}
