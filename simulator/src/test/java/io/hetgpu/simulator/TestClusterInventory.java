package io.hetgpu.simulator;

import io.hetgpu.extender.model.NodeGpus;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.CpuMemory;
import io.hetgpu.testcluster.cluster.NodeSpec;
import java.util.ArrayList;
import java.util.List;

/** The nodes of a test cluster as the simulator sees them, for the tests that run both on one cluster. */
final class TestClusterInventory {

    private TestClusterInventory() {
    }

    /** Each GPU node with its whole profile, the same names, racks, zones and allocatable cpu and memory. */
    static ClusterInventory of(List<NodeSpec> specs, CardCatalog catalog) {
        var nodes = new ArrayList<SimNode>(specs.size());
        for (var spec : specs) {
            var gpus = spec.profile().map(profile -> NodeGpus.of(ClusterInventory.load(profile, spec.name()), catalog)).orElse(NodeGpus.NONE);
            nodes.add(new SimNode(spec.name(), spec.rack(), spec.zone(), gpus, CpuMemory.of(spec.cpus(), spec.memoryGi())));
        }
        return new ClusterInventory(nodes);
    }
}
