package io.hetgpu.testcluster.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code hetgpu-test-cluster}: the demo and the tools around the one-machine cluster. */
@Command(name = "hetgpu-test-cluster", mixinStandardHelpOptions = true,
        subcommands = {DemoCommand.class, InventoryCommand.class},
        description = "hetgpu on one machine: simulated GPU nodes, the real device plugin and extender.")
public final class TestClusterMain {

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    static CommandLine commandLine() {
        return new CommandLine(new TestClusterMain());
    }
}
