package io.hetgpu.testcluster.cli;

import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.gpu.profile.SimulatedGpuSource;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.nvml.GpuSources;
import io.hetgpu.nvml.InventoryText;
import io.hetgpu.nvml.NvmlOptions;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import io.hetgpu.gpu.release.ReleaseVersion;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** Prints what hetgpu sees of a node's GPUs: discovered through NVML, or from simulated profiles. */
@Command(name = "inventory", mixinStandardHelpOptions = true, versionProvider = ReleaseVersion.class,
        description = "Print the GPU inventory (devices, tiers, links, NVLink islands) of simulated profiles or of this machine.")
final class InventoryCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--gpu-source", paramLabel = "nvml|simulated:<profile>",
            description = "Where the GPUs come from. Default: every shipped simulated profile.")
    String gpuSource;

    @Option(names = "--node-name", defaultValue = "demo-node", description = "Node name (seeds simulated UUIDs). Default: ${DEFAULT-VALUE}.")
    String nodeName;

    @Option(names = "--json", description = "Print only JSON, for tools such as jq: the%nhetgpu.io/gpu-inventory annotation the device plugin "
            + "would publish (with --gpu-source), or an object of them by source (without).")
    boolean json;

    @Override
    public Integer call() throws JsonProcessingException {
        var out = spec.commandLine().getOut();
        var sources = gpuSource == null
                ? SimulatedGpuSource.shippedProfiles().stream().map(p -> GpuSources.SIMULATED_PREFIX + p).toList()
                : List.of(gpuSource);
        var inventories = new LinkedHashMap<String, String>();
        for (var name : sources) {
            try (var source = GpuSources.open(name, nodeName, NvmlOptions.defaults())) {
                if (json) {
                    inventories.put(name, new InventoryCodec().encode(source.topology()));
                } else {
                    out.println(InventoryText.render("== " + source.description(), source.topology(), CardCatalog.defaults()));
                }
            } catch (GpuDiscoveryException e) {
                spec.commandLine().getErr().println("hetgpu: " + e.getMessage());
                return 1;
            }
        }
        if (json) {
            out.println(inventories.size() == 1 && gpuSource != null ? inventories.values().iterator().next() : byName(inventories));
        }
        out.flush();
        return 0;
    }

    /** {"simulated:dgx-a100": {...}, ...}: each annotation embedded as JSON, not as a string. */
    private static String byName(Map<String, String> inventories) throws JsonProcessingException {
        var mapper = new ObjectMapper();
        var all = mapper.createObjectNode();
        for (var entry : inventories.entrySet()) {
            all.set(entry.getKey(), mapper.readTree(entry.getValue()));
        }
        return mapper.writeValueAsString(all);
    }
}
