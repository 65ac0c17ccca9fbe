package io.hetgpu.testcluster.cli;

import io.hetgpu.gpu.Quote;
import io.hetgpu.testcluster.docs.DocsCommand;
import io.hetgpu.testcluster.draplacement.DraPlacementCommand;
import io.hetgpu.testcluster.explain.ExplainCommand;
import io.hetgpu.testcluster.throughputs.ThroughputsCommand;
import picocli.CommandLine;
import io.hetgpu.gpu.release.ReleaseVersion;
import picocli.CommandLine.Command;

/** {@code hetgpu-test-cluster}: the demo and the tools around the one-machine cluster. */
@Command(name = "hetgpu-test-cluster", mixinStandardHelpOptions = true, versionProvider = ReleaseVersion.class,
        subcommands = {DemoCommand.class, InventoryCommand.class, ExplainCommand.class, ThroughputsCommand.class, DocsCommand.class,
                DraPlacementCommand.class},
        description = "hetgpu on one machine: simulated GPU nodes, the real device plugin and extender.")
public final class TestClusterMain {

    /** Held so that the level set on it stays: java.util.logging keeps loggers only weakly. */
    private static final java.util.logging.Logger MOCK_SERVER_LOG = java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

    public static void main(String[] args) {
        // The components log as they would in a cluster; on one terminal only warnings are worth showing.
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        MOCK_SERVER_LOG.setLevel(java.util.logging.Level.WARNING);
        // explain lists JobSets, whose API is v1alpha2: fabric8 warns of every unstable version it uses, which says nothing to a pod author.
        System.setProperty("org.slf4j.simpleLogger.log.io.fabric8.kubernetes.client.dsl.internal.VersionUsageUtils", "error");
        System.exit(commandLine().execute(args));
    }

    public static CommandLine commandLine() {
        var commandLine = new CommandLine(new TestClusterMain());
        // The launcher says how the user typed the command, so help and errors name it that way.
        var typed = System.getProperty("hetgpu.command");
        if (typed != null && !typed.isBlank()) {
            commandLine.setCommandName(typed);
        }
        // A bad argument: one line naming it and where help is, not the whole usage.
        commandLine.setParameterExceptionHandler((e, arguments) -> {
            var command = e.getCommandLine();
            command.getErr().println("hetgpu: " + e.getMessage() + " (see " + command.getCommandSpec().qualifiedName() + " --help)");
            return 2;
        });
        // What went wrong in one line, never a stack trace; escaped, as the message may carry what a file or a cluster holds.
        commandLine.setExecutionExceptionHandler((e, cmd, parsed) -> {
            cmd.getErr().println("hetgpu: " + Quote.escaped(e.getMessage() == null ? e.toString() : e.getMessage()));
            return 1;
        });
        return commandLine;
    }
}
