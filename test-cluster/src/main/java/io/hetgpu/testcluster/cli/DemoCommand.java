package io.hetgpu.testcluster.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** The README's first command. Until the whole test cluster runs, it shows what hetgpu sees of each simulated machine. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "The hetgpu demo: the GPU inventory of every simulated machine type.")
final class DemoCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return spec.commandLine().getParent().execute("inventory");
    }
}
