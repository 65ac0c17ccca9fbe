package io.hetgpu.extender.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.bench.ExtenderBenchmark.ClientKind;
import io.hetgpu.extender.bench.ExtenderBenchmark.Form;
import io.hetgpu.extender.bench.ExtenderBenchmark.PodShape;
import io.hetgpu.gpu.bench.BenchCommandLine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What `./hetgpu bench extender` and `./hetgpu bench bind`, and the in-process profiles of docs/performance.md, answer to
 * their arguments before they start anything.
 */
class BenchmarkCommandsTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "--sizes 100,abc       | Invalid value for option '--sizes' (N): 'abc' is not an int",
            "--seconds             | Missing required parameter for option '--seconds' (S)",
            "--seconds 0           | --seconds must be more than 0, got 0.0",
            "--sizes 100,0         | --sizes must each be at least 1, got [100, 0]",
            "--pods job17          | Invalid value for option '--pods': expected one of [SAME, ALTERNATING, JOB16] (case-insensitive) but was 'job17'",
            "--forms Nodes,Pods    | Invalid value for option '--forms' (FORM): expected one of [Nodes, NodeNames] (case-insensitive) but was 'Pods'",
            "--client curl         | Invalid value for option '--client': expected one of [GO, NETTY, JDK] (case-insensitive) but was 'curl'",
            "--soak -1             | --soak must be 0 (no soak) or more, got -1",
            "--event-loop-poll-us -5 --client netty | --event-loop-poll-us must be 0 or more, got -5",
            "--client go           | --client go needs --client-binary (./hetgpu bench extender builds it from scheduler-extender/bench/extender-client)",
            "--sizes 100 extra     | Unmatched argument at index 2: 'extra'",
            "--dra --pods job16    | --dra times one pod shape (--pods same) beside its device-plugin twin, not with --soak or --jobs; got --pods job16",
            "--dra --soak 4        | --dra times one pod shape (--pods same) beside its device-plugin twin, not with --soak or --jobs; got --pods same --soak 4",
            "serve 100 job17 100   | Invalid value for positional parameter at index 1 (PODS): expected one of [SAME, ALTERNATING, JOB16] (case-insensitive) but was 'job17'"})
    void theExtenderBenchmarksWrongArgumentIsOneLineNamingItAndItsValue(String args, String message) {
        var answer = BenchCommandLine.answer(new ExtenderBenchmark(), args.split(" "));
        assertThat(answer.status()).isEqualTo(2);
        assertThat(answer.err()).isEqualTo("./hetgpu bench extender: " + message + " (see --help)" + System.lineSeparator());
        assertThat(answer.out()).as("nothing started, nothing printed").isEmpty();
    }

    @Test
    void theExtenderBenchmarkReadsWhatTheReadmesCommandsSay() {
        var benchmark = new ExtenderBenchmark();
        BenchCommandLine.of(benchmark).parseArgs("--seconds", "6", "--sizes", "100,1000,5000,15000", "--forms", "NodeNames", "--pods",
                "job16", "--client", "netty", "--floor", "../shared/bench/extender-floor");
        assertThat(benchmark.sizes).containsExactly(100, 1000, 5000, 15000);
        assertThat(benchmark.seconds).isEqualTo(6);
        assertThat(benchmark.forms).containsExactly(Form.NodeNames);
        assertThat(benchmark.pods).isEqualTo(PodShape.JOB16);
        assertThat(benchmark.clientKind).isEqualTo(ClientKind.NETTY);
        assertThat(benchmark.floor).isEqualTo("../shared/bench/extender-floor");
        assertThat(benchmark.dra).isFalse();

        var dra = new ExtenderBenchmark();
        BenchCommandLine.of(dra).parseArgs("--sizes", "1000,5000", "--forms", "NodeNames", "--dra", "--seconds", "8");
        assertThat(dra.dra).isTrue();
        assertThat(dra.sizes).containsExactly(1000, 5000);

        var defaults = new ExtenderBenchmark();
        BenchCommandLine.of(defaults).parseArgs();
        assertThat(defaults.sizes).containsExactly(100, 1000, 5000);
        assertThat(defaults.seconds).isEqualTo(20);
        assertThat(defaults.forms).as("both forms, or NodeNames alone for the soak, decided when it runs").isNull();
        assertThat(defaults.pods).isEqualTo(PodShape.SAME);
        assertThat(defaults.clientKind).isEqualTo(ClientKind.GO);
        assertThat(defaults.pollMicros).as("the extender's own default").isNull();
    }

    @Test
    void theExtenderBenchmarksHelpListsItsOptionsButTheLaunchersOwn() {
        var answer = BenchCommandLine.answer(new ExtenderBenchmark(), "--help");
        assertThat(answer.status()).isZero();
        assertThat(answer.out()).contains("--sizes=N[,N...]", "--forms=FORM[,FORM...]", "--seconds=S", "--pods=SHAPE", "--dra", "--floor=DIR",
                "--server-jvm=OPTS", "--event-loop-poll-us=N", "--client=CLIENT", "--soak=CLIENTS", "--soak-seconds=S")
                .doesNotContain("--floor-binary", "--client-binary")
                .as("the child process's command is the benchmark's own").doesNotContain("Commands:");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "--nodes 0             | --nodes must be at least 1, got 0",
            "--binds many          | Invalid value for option '--binds': 'many' is not an int",
            "--api-ms 0,x          | Invalid value for option '--api-ms' (MS): 'x' is not an int",
            "--api-ms 0,-2         | --api-ms must be 0 or more, got [0, -2]",
            "--api-ms              | Missing required parameter for option '--api-ms' (MS)"})
    void theBindBenchmarksWrongArgumentIsOneLineNamingItAndItsValue(String args, String message) {
        var answer = BenchCommandLine.answer(new BindBenchmark(), args.split(" "));
        assertThat(answer.status()).isEqualTo(2);
        assertThat(answer.err()).isEqualTo("./hetgpu bench bind: " + message + " (see --help)" + System.lineSeparator());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "InProcessProfile | 5000                  | Missing required parameter: 'SECONDS'",
            "InProcessProfile | 5000 4 1000           | CLUSTER must hold the NAMES asked for, at least 5000, got 1000",
            "InProcessProfile | 5000 4 15000 lots     | Invalid value for positional parameter at index 3 (EVICT_MIB): 'lots' is not an int",
            "InProcessProfile | 0 4                   | NAMES must be at least 1, got 0",
            "InProcessProfile | 5000 4 --dra=maybe    | Invalid value for option '--dra': 'maybe' is not a boolean",
            "JobPlanProfile   | 5000 four             | Invalid value for positional parameter at index 1 (SECONDS): 'four' is not a double",
            "JobPlanProfile   | 5000 0                | SECONDS must be more than 0, got 0.0"})
    void theProfilesWrongArgumentIsOneLineNamingItAndItsValue(String profile, String args, String message) {
        var answer = BenchCommandLine.answer(profile.equals("JobPlanProfile") ? new JobPlanProfile() : new InProcessProfile(),
                args.split(" "));
        assertThat(answer.status()).isEqualTo(2);
        assertThat(answer.err()).isEqualTo(profile + ": " + message + " (see --help)" + System.lineSeparator());
    }

    @Test
    void theBindBenchmarksDefaultsAreThoseItsFiguresWereTakenWith() {
        var benchmark = new BindBenchmark();
        BenchCommandLine.of(benchmark).parseArgs();
        assertThat(benchmark.size).isEqualTo(5000);
        assertThat(benchmark.binds).isEqualTo(20000);
        assertThat(benchmark.latencies).containsExactly(0, 2);
    }
}
