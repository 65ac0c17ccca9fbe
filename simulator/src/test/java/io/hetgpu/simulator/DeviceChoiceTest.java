package io.hetgpu.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.deviceplugin.devices.PreferredAllocation;
import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.selection.TieBreak;
import io.hetgpu.testcluster.cluster.NodeSpec;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The devices a pod gets on a node with two kinds of card (2 A100 joined by NVLink, 2 T4): with the bind handshake
 * the extender's choice, which honours the pod's card requirements; told only a count (kubelet's
 * GetPreferredAllocation for a pod whose requirements the plugin cannot read), the allocator keeps the NVLink-joined
 * A100 pair whole. The plugin's degraded mode reads the pending pod's requirements (test-cluster's
 * {@code BindHandshakeStressTest}).
 */
class DeviceChoiceTest {

    private static final ClusterInventory MIXED = TestClusterInventory.of(List.of(NodeSpec.gpu("mixed-1", "rack-a", "zone-1", "mixed")),
            CardCatalog.defaults());
    private final PlacementPolicy policy = new PlacementPolicy(ExtenderConfig.DEFAULTS.policy());
    private final io.hetgpu.gpu.NodeTopology topology = MIXED.nodes().getFirst().gpus().topology();

    private static Job job(Set<String> models, long minMemoryMiB) {
        return new Job(0, 0, true, Job.HIGH_PRIORITY, "", List.of(new Job.Pod(1, "")), 0, models, minMemoryMiB, 0, "");
    }

    private String modelGiven(Job job) {
        var placer = new HetgpuPlacer("hetgpu", policy, false, TieBreak.random(new Random(1)));
        var placement = placer.place(job, 0, List.of(), new ClusterState(MIXED));
        return topology.device(placement.set().positions().getFirst()).model();
    }

    @Test
    void aPodThatNeedsTheBigCardsGetsAnA100WhereThePluginAloneWouldHaveGivenAT4() {
        assertThat(modelGiven(job(Set.of(), 32 * 1024))).isEqualTo("A100");

        // Told only a count, the allocator keeps the NVLink-joined A100 pair whole and answers with a 15 GB T4.
        var uuids = topology.devices().stream().map(device -> device.uuid()).toList();
        var preferred = new PreferredAllocation(topology).choose(uuids, List.of(), 1);
        assertThat(topology.device(topology.positionOf(preferred.getFirst()).orElseThrow()).model()).isEqualTo("T4");
    }

    @Test
    void aPodLimitedToT4sGetsAT4() {
        assertThat(modelGiven(job(Set.of("T4"), 0))).isEqualTo("T4");
    }
}
