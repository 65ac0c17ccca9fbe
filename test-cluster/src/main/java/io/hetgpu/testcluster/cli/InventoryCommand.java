package io.hetgpu.testcluster.cli;

import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.gpu.profile.SimulatedGpuSource;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.nvml.GpuSources;
import io.hetgpu.nvml.InventoryText;
import io.hetgpu.nvml.NvmlOptions;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** Prints what hetgpu sees of a node's GPUs: discovered through NVML, or from simulated profiles. */
@Command(name = "inventory", mixinStandardHelpOptions = true,
        description = "Print the GPU inventory (devices, tiers, links, NVLink islands) of simulated profiles or of this machine.")
final class InventoryCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--gpu-source", paramLabel = "nvml|simulated:<profile>",
            description = "Where the GPUs come from. Default: every shipped simulated profile.")
    String gpuSource;

    @Option(names = "--node-name", defaultValue = "demo-node", description = "Node name (seeds simulated UUIDs). Default: ${DEFAULT-VALUE}.")
    String nodeName;

    @Option(names = "--json", description = "Also print the hetgpu.io/gpu-inventory annotation the device plugin would publish.")
    boolean json;

    @Override
    public Integer call() {
        var out = spec.commandLine().getOut();
        var sources = gpuSource == null
                ? SimulatedGpuSource.shippedProfiles().stream().map(p -> GpuSources.SIMULATED_PREFIX + p).toList()
                : List.of(gpuSource);
        for (var name : sources) {
            try (var source = GpuSources.open(name, nodeName, NvmlOptions.defaults())) {
                print(out, source.description(), source.topology());
            } catch (GpuDiscoveryException e) {
                spec.commandLine().getErr().println("hetgpu: " + e.getMessage());
                return 1;
            }
        }
        return 0;
    }

    private void print(PrintWriter out, String title, io.hetgpu.gpu.NodeTopology topology) {
        out.println(InventoryText.render("== " + title, topology, CardCatalog.defaults()));
        if (json) {
            out.println(new InventoryCodec().encode(topology));
            out.println();
        }
        out.flush();
    }
}
