package io.hetgpu.testcluster.cli;

import io.hetgpu.testcluster.demo.Demo;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import io.hetgpu.gpu.cli.OutputFolder;
import io.hetgpu.gpu.release.ReleaseVersion;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** The README's first command: the whole system on one machine, hetgpu beside kube-scheduler alone. */
@Command(name = "demo", mixinStandardHelpOptions = true, versionProvider = ReleaseVersion.class,
        description = {"Starts a heterogeneous test cluster (3 racks: DGX H100, DGX A100, 2x DGX-1 V100,",
                "2x T4, 2x K80 boxes, 3 CPU nodes) with the real device plugins and scheduler",
                "extender, submits a realistic job mix, and shows where every pod went beside",
                "kube-scheduler alone on the same cluster and jobs. Then two scenes, each on a",
                "cluster of its own: an urgent 8-GPU job preempting on a full cluster, and two",
                "8-GPU jobs arriving together on two 4-GPU servers (kube-scheduler alone places",
                "one pod of each and both stall; hetgpu places one job whole and the other",
                "waits holding nothing)."})
final class DemoCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--html", paramLabel = "FILE", defaultValue = "target/hetgpu-demo.html",
            description = {"Where to write the picture of racks, nodes and GPUs; each scene's picture goes beside it,",
                    "its name ending in -preemption.html or -jobs.html. Default: ${DEFAULT-VALUE}"})
    Path html;

    @Option(names = "--seed", defaultValue = "42", description = "Seed of kube-scheduler's tie-breaking. Default: ${DEFAULT-VALUE}")
    long seed;

    @Override
    public Integer call() throws Exception {
        // Said before the demo's clusters start, not after them as the bare path an exception carries.
        var folder = html.toAbsolutePath().getParent();
        var problem = OutputFolder.problem(folder);
        if (problem.isPresent()) {
            throw new ParameterException(spec.commandLine(), "--html: " + problem.get());
        }
        return new Demo(spec.commandLine().getOut(), spec.commandLine().getErr()).run(html, seed);
    }
}
