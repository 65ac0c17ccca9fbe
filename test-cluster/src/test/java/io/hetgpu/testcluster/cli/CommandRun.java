package io.hetgpu.testcluster.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

/** A launcher command run in this process as the command line runs it: its exit code, and what it printed where. */
public record CommandRun(int code, String out, String err) {

    /** {@code ./hetgpu COMMAND ARGS...}, through the same command tree {@link TestClusterMain} builds. */
    public static CommandRun of(String command, String... args) {
        var out = new StringWriter();
        var err = new StringWriter();
        var commandLine = TestClusterMain.commandLine();
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        var all = new ArrayList<String>();
        all.add(command);
        all.addAll(List.of(args));
        int code = commandLine.execute(all.toArray(String[]::new));
        return new CommandRun(code, out.toString(), err.toString());
    }
}
