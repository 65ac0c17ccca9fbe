package io.hetgpu.simulator;

import io.hetgpu.extender.policy.TopTierHeadroom;
import io.hetgpu.extender.service.PolicyStep;
import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.deviceplugin.devices.PreferredAllocation;
import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.testcluster.cluster.NodeSpec;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Where the devices a pod gets can differ from the set hetgpu's policy offered: kubelet asks the device
 * plugin's GetPreferredAllocation with every free device of the node and a count, never the pod's card
 * or memory requirements. On a node with one kind of card the two agree (the same allocator over the
 * same free devices); on a node with two kinds they need not, and the simulator gives what the plugin
 * gives ({@link ClusterState#deviceGrant}), as the test cluster does.
 */
class DeviceChoiceTest {

    private static final ClusterInventory MIXED = TestClusterInventory.of(List.of(NodeSpec.gpu("mixed-1", "rack-a", "zone-1", "mixed")),
            CardCatalog.defaults());

    @Test
    void onANodeWithTwoKindsOfCardAPodThatNeedsTheBigCardsIsGivenAT4() {
        var job = new Job(0, 0, true, Job.HIGH_PRIORITY, "", List.of(new Job.Pod(1, "")), 0, Set.of(), 32 * 1024, 0, "");
        var cluster = new ClusterState(MIXED);
        var policy = new PlacementPolicy(ExtenderConfig.DEFAULTS.policy());
        var topology = MIXED.nodes().getFirst().gpus().topology();

        var offered = PolicyStep.scores(policy, HetgpuPlacer.request(job, 0, false), cluster.states(), () -> TopTierHeadroom.NONE,
                        HetgpuPlacer.context(job, List.of(), cluster))
                .rows().getFirst().candidate().set().positions();
        var uuids = topology.devices().stream().map(device -> device.uuid()).toList();
        var preferred = new PreferredAllocation(topology).choose(uuids, List.of(), 1);

        // hetgpu's filter admits the node for its 40 GB A100s and offers one of them ...
        assertThat(offered).singleElement().satisfies(p -> assertThat(topology.device(p).model()).isEqualTo("A100"));
        // ... but the plugin, keeping the NVLink-joined A100 pair whole, answers kubelet with a 15 GB T4.
        assertThat(preferred).singleElement().satisfies(uuid -> assertThat(topology.device(topology.positionOf(uuid).orElseThrow()).model())
                .isEqualTo("T4"));
        assertThat(cluster.deviceGrant(0, 1).positions()).containsExactly(topology.positionOf(preferred.getFirst()).orElseThrow());
    }
}
