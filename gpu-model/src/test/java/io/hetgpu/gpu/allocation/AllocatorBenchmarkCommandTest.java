package io.hetgpu.gpu.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.bench.BenchCommandLine;
import io.hetgpu.gpu.profile.ProfileLoader;
import org.junit.jupiter.api.Test;

/** What `./hetgpu bench allocator` answers to its arguments, before it measures anything. */
class AllocatorBenchmarkCommandTest {

    @Test
    void anUnknownOptionIsOneLineNamingIt() {
        var answer = BenchCommandLine.answer(new AllocatorBenchmark(), "--bogus");
        assertThat(answer.status()).isEqualTo(2);
        assertThat(answer.err()).isEqualTo("./hetgpu bench allocator: Unknown option: '--bogus' (see --help)" + System.lineSeparator());
    }

    @Test
    void aProfileThatDoesNotExistIsItsMessageBeforeAnyFigure() {
        var answer = BenchCommandLine.answer(new AllocatorBenchmark(), "dgx-a100", "no-such-machine");
        assertThat(answer.status()).isEqualTo(1);
        assertThat(answer.err()).startsWith("./hetgpu bench allocator: no-such-machine: no such profile").doesNotContain("\tat ");
        assertThat(answer.out()).as("no profile is timed when one of them cannot be read").isEmpty();
    }

    @Test
    void withoutArgumentsEveryShippedProfileIsTimedAndProfilesNamedReplaceThem() {
        var all = new AllocatorBenchmark();
        BenchCommandLine.of(all).parseArgs();
        assertThat(all.profiles).isEqualTo(ProfileLoader.SHIPPED);

        var two = new AllocatorBenchmark();
        BenchCommandLine.of(two).parseArgs("dgx-a100", "k80-4x");
        assertThat(two.profiles).containsExactly("dgx-a100", "k80-4x");
    }

    @Test
    void helpListsWhatItTakes() {
        var answer = BenchCommandLine.answer(new AllocatorBenchmark(), "--help");
        assertThat(answer.status()).isZero();
        assertThat(answer.out()).contains("./hetgpu bench allocator", "[PROFILE...]", "every shipped profile");
    }
}
