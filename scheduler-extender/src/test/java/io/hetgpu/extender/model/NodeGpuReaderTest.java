package io.hetgpu.extender.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Which source a node's GPUs come from, and what a bad one hands over to. */
class NodeGpuReaderTest {

    private final NodeGpuReader reader = new NodeGpuReader(CardCatalog.defaults(), "nvidia.com/gpu");
    private final NodeStateFactory factory = new NodeStateFactory(CardCatalog.defaults(), "topology.hetgpu.io/rack", "nvidia.com/gpu");

    private static NodeFacts node(Map<String, String> labels, String inventory, String allocatable) {
        return new NodeFacts("n", "", labels, inventory, null, allocatable);
    }

    @Test
    void hetgpusInventoryComesFirstWhateverElseTheNodeCarries() {
        var topology = TestTopologies.dgx1V100("n");
        var gpus = reader.read(node(TestNodes.gfdLabels("Tesla-T4", 15360, 7, 5, 4), TestTopologies.inventory(topology), "8"));

        assertThat(gpus.source()).isInstanceOf(NodeGpuSource.HetgpuInventory.class);
        assertThat(gpus.summary()).isEqualTo("8 V100 (16 GiB, cc 7.0)");
    }

    @Test
    void featureDiscoveryLabelsWithTheAllocatableCountComeNext() {
        var gpus = reader.read(node(TestNodes.gfdLabels("Tesla-V100-SXM2-16GB", 16160, 7, 0, 8), null, "6"));

        assertThat(gpus.source()).isInstanceOf(NodeGpuSource.FeatureDiscoveryLabels.class);
        assertThat(gpus.size()).isEqualTo(6);
        assertThat(Long.bitCount(gpus.healthyMask())).isEqualTo(6);
        assertThat(gpus.tiers()).extracting(tier -> tier.model() + " " + tier.rank()).containsOnly("V100 40");
        assertThat(gpus.summary()).isEqualTo("6 V100 (16 GiB, cc 7.0) from GPU Feature Discovery labels, links unknown");
    }

    @Test
    void anUnknownProductIsRankedByTheCatalogFromItsComputeCapabilityAndMemory() {
        var gpus = reader.read(node(TestNodes.gfdLabels("NVIDIA-GeForce-RTX-4090", 24564, 8, 9, 2), null, "2"));

        assertThat(gpus.source().knowsModel()).isTrue();
        assertThat(gpus.tiers().getFirst().model()).isEqualTo("RTX-4090");
        assertThat(gpus.tiers().getFirst().estimated()).isTrue();
    }

    @Test
    void theAllocatableCountAloneGivesGpusOfUnknownModelRankedInTheMiddle() {
        var gpus = reader.read(node(Map.of(), null, "4"));

        assertThat(gpus.source()).isEqualTo(new NodeGpuSource.AllocatableOnly(4, "no GPU Feature Discovery labels"));
        assertThat(gpus.size()).isEqualTo(4);
        assertThat(gpus.tiers()).extracting(tier -> tier.rank()).containsOnly(CardCatalog.defaults().middleRank());
        assertThat(gpus.summary()).isEqualTo("4 GPUs of unknown model (no GPU Feature Discovery labels)");
    }

    @Test
    void malformedLabelsHandOverToTheAllocatableCountSayingWhy() {
        var labels = TestNodes.gfdLabels("Tesla-V100-SXM2-16GB", 16160, 7, 0, 8);
        labels.put("nvidia.com/gpu.memory", "16GB");

        var gpus = reader.read(node(labels, null, "8"));

        assertThat(gpus.source()).isInstanceOf(NodeGpuSource.AllocatableOnly.class);
        assertThat(gpus.summary()).isEqualTo("8 GPUs of unknown model (GPU Feature Discovery labels unusable: "
                + "nvidia.com/gpu.memory: expected memory of one GPU in MiB such as 16160, got \"16GB\")");
    }

    @Test
    void anUnreadableInventoryHandsOverToTheLabelsSayingWhy() {
        var gpus = reader.read(node(TestNodes.gfdLabels("Tesla-T4", 15360, 7, 5, 4), "{not json", "4"));

        assertThat(gpus.source()).isInstanceOf(NodeGpuSource.FeatureDiscoveryLabels.class);
        assertThat(gpus.summary()).startsWith("4 T4 (15 GiB, cc 7.5) from GPU Feature Discovery labels, links unknown; hetgpu.io/gpu-inventory unreadable: ");
    }

    @Test
    void anUnreadableInventoryWithNothingElseStillRefusesAsBefore() {
        var gpus = reader.read(node(Map.of(), "{not json", null));

        assertThat(gpus.problem()).startsWith("hetgpu.io/gpu-inventory unreadable: ");
        assertThat(new NodeState("n", "", "", gpus, 0).isGpuNode()).isTrue();
    }

    @Test
    void gpusGfdSawThatKubeletDoesNotOfferMakeAGpuNodeWithNoneToGive() {
        var gpus = reader.read(node(TestNodes.gfdLabels("Tesla-T4", 15360, 7, 5, 4), null, "0"));

        assertThat(gpus.size()).isEqualTo(4);
        assertThat(gpus.healthyMask()).isZero();
        assertThat(gpus.summary()).endsWith("; none offered in status.allocatable[nvidia.com/gpu]");
    }

    @Test
    void noAllocatableAndNoLabelsIsACpuNode() {
        assertThat(reader.read(node(Map.of(), null, null))).isSameAs(NodeGpus.NONE);
        assertThat(reader.read(node(Map.of(), null, "0"))).isSameAs(NodeGpus.NONE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"four", "-1", "1.5", "", "4Gi"})
    void aMalformedAllocatableCountRefusesGpuPodsThereAndNamesTheValue(String allocatable) {
        var gpus = reader.read(node(TestNodes.gfdLabels("Tesla-T4", 15360, 7, 5, 4), null, allocatable));

        assertThat(gpus.size()).isZero();
        assertThat(gpus.problem()).isEqualTo("status.allocatable[nvidia.com/gpu]: expected a whole number of GPUs, got \"" + allocatable + "\"");
    }

    @Test
    void moreThanSixtyFourOfferedAreCountedAsSixtyFour() {
        var gpus = reader.read(node(Map.of(), null, "80"));

        assertThat(gpus.size()).isEqualTo(64);
        assertThat(gpus.summary()).contains("status.allocatable[nvidia.com/gpu] is 80: counted as 64");
    }

    @Test
    void withoutHetgpusFreeListTheFreeCountIsAllocatableMinusTheGpusOfBoundPods() {
        var labels = TestNodes.gfdLabels("Tesla-V100-SXM2-16GB", 16160, 7, 0, 8);
        var facts = new NodeFacts("n", "1", labels, null, null, "8");
        var bound = List.of(new BoundPod("a", 2, false, Instant.parse("2026-01-01T00:00:00Z")),
                new BoundPod("b", 3, true, Instant.parse("2026-01-01T00:01:00Z")));

        assertThat(factory.state(facts, List.of()).freeCount()).isEqualTo(8);
        assertThat(factory.state(facts, bound).freeCount()).isEqualTo(3);
    }

    @Test
    void aStaleFreeListOnANodeWithoutInventoryIsIgnored() {
        var topology = TestTopologies.t4x4("n");
        var facts = new NodeFacts("n", "1", Map.of(), null, TestTopologies.free(topology), "4");

        assertThat(factory.state(facts, List.of()).freeCount()).isEqualTo(4);
    }

    @Test
    void theCachedReadingFollowsLabelAndAllocatableChanges() {
        var labels = TestNodes.gfdLabels("Tesla-T4", 15360, 7, 5, 4);
        assertThat(factory.state(new NodeFacts("n", "1", labels, null, null, "4"), List.of()).gpus().summary()).startsWith("4 T4");

        assertThat(factory.state(new NodeFacts("n", "2", labels, null, null, "3"), List.of()).gpus().summary()).startsWith("3 T4");
        var changed = new HashMap<>(labels);
        changed.put("nvidia.com/gpu.product", "Tesla-V100-SXM2-16GB");
        changed.put("nvidia.com/gpu.compute.major", "7");
        changed.put("nvidia.com/gpu.compute.minor", "0");
        assertThat(factory.state(new NodeFacts("n", "3", changed, null, null, "3"), List.of()).gpus().summary()).startsWith("3 V100");
    }
}
