package io.hetgpu.gpu.bench;

import io.hetgpu.gpu.cli.OneLineErrors;
import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * How every {@code ./hetgpu bench} program reads its options, with the errors every hetgpu program has
 * ({@link OneLineErrors}): a wrong option or value is one line naming both and exit status 2, a benchmark that cannot
 * go on is its message and status 1, never a stack trace; {@code --help} lists the options. Each benchmark is a picocli
 * command whose {@code call()} runs it.
 */
public final class BenchCommandLine {

    private BenchCommandLine() {
    }

    /** The command line of {@code command}, with the error handling above; tests parse with it too. */
    public static CommandLine of(Object command) {
        var line = new CommandLine(command).setCaseInsensitiveEnumValuesAllowed(true);
        return OneLineErrors.install(line, line.getCommandName());
    }

    /** A value the option's type admits but the benchmark cannot use is refused as a malformed one is. */
    public static void require(CommandSpec spec, boolean holds, String problem) {
        if (!holds) {
            throw new ParameterException(spec.commandLine(), problem);
        }
    }

    /** What a benchmark's command line answered to some arguments: for tests that give it wrong ones. */
    public record Answer(int status, String out, String err) {
    }

    /** Runs the command on {@code args} with its output caught; only for arguments that stop it before it measures. */
    public static Answer answer(Object command, String... args) {
        var out = new StringWriter();
        var err = new StringWriter();
        int status = of(command).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true)).execute(args);
        return new Answer(status, out.toString(), err.toString());
    }

    /** Runs the benchmark and exits with its status. */
    public static void run(Object command, String... args) {
        System.exit(of(command).execute(args));
    }
}
