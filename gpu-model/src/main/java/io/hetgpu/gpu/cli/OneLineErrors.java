package io.hetgpu.gpu.cli;

import picocli.CommandLine;

/**
 * How hetgpu's programs answer what they cannot do: a wrong flag or value is one line naming it, then where help is
 * (exit 2), not picocli's whole usage; a failure while running is its message (exit 1), never a stack trace.
 */
public final class OneLineErrors {

    private OneLineErrors() {
    }

    /** Sets both handlers on {@code commandLine}, each line starting with {@code program}; returns it. */
    public static CommandLine install(CommandLine commandLine, String program) {
        commandLine.setParameterExceptionHandler((e, arguments) -> {
            e.getCommandLine().getErr().println(program + ": " + e.getMessage() + " (see --help)");
            return 2;
        });
        commandLine.setExecutionExceptionHandler((e, failed, parsed) -> {
            failed.getErr().println(program + ": " + (e.getMessage() == null ? e.toString() : e.getMessage()));
            return 1;
        });
        return commandLine;
    }
}
