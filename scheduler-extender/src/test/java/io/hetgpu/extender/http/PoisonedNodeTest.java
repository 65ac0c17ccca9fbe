package io.hetgpu.extender.http;

import io.hetgpu.extender.service.ExtenderService;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.http.WireCluster.Form;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One node with annotations the extender cannot read costs that node only: over HTTP, in both node forms,
 * for GPU and CPU pods, the other nodes are judged as if it were not there.
 */
class PoisonedNodeTest {

    private static final String DGX = KubeJson.text("node-dgx1-v100.json");
    private static final String CPU = KubeJson.text("node-cpu.json");
    private static final String DEEP = "[".repeat(1_001) + "]".repeat(1_001);

    /**
     * 65 GPUs, one more than device masks hold, and kubelet offering them: the inventory is refused naming the
     * limit, and the node's GPUs are read from the allocatable count as GPUs of unknown model (at most 64).
     */
    static final String WIDE = WireCluster.node("wide-65", TestTopologies.inventory(TestTopologies.v100Pcie("wide-65", 65)),
            TestTopologies.allFree(TestTopologies.v100Pcie("wide-65", 65)), "65");
    /** An inventory nested deeper than the JSON reader's limit, and nothing else about the node's GPUs: unreadable. */
    static final String DEEP_INVENTORY = WireCluster.node("deep-inventory", DEEP, null, null);
    /** A good inventory whose free list is nested too deep: unreadable. */
    static final String DEEP_FREE = WireCluster.node("deep-free", TestTopologies.inventory(TestTopologies.dgx1V100("deep-free")),
            "{\"devices\":" + DEEP + ",\"readAt\":\"2026-01-01T00:00:00Z\"}", "8");

    private static final List<String> NODES = List.of(DGX, WIDE, DEEP_INVENTORY, DEEP_FREE, CPU);
    private static final List<String> POISONED = List.of("wide-65", "deep-inventory", "deep-free");

    @ParameterizedTest
    @EnumSource(Form.class)
    void aGpuPodIsFilteredAsIfThePoisonedNodesWereUnschedulable(Form form) {
        try (var cluster = new WireCluster(form, NODES)) {
            var filter = cluster.ask("filter", WireCluster.GPU_POD);

            assertThat(filter.status()).isEqualTo(200);
            assertThat(filter.body().get("Error").asText()).isEmpty();
            assertThat(keptNames(filter, form)).containsExactly("dgx-v100-07");
            var unresolvable = filter.body().get("FailedAndUnresolvableNodes");
            assertThat(unresolvable.get("wide-65").asText()).isEqualTo("GPU model unknown: node has 64 GPUs of unknown model "
                    + "(hetgpu.io/gpu-inventory unreadable: devices: 65 devices, but hetgpu handles at most 64 GPUs per node; "
                    + "status.allocatable[nvidia.com/gpu] is 65: counted as 64; no GPU Feature Discovery labels), pod needs A100 or V100");
            assertThat(unresolvable.get("deep-inventory").asText())
                    .isEqualTo("hetgpu.io/gpu-inventory unreadable: gpu-inventory: nested deeper than 16 levels");
            assertThat(unresolvable.get("deep-free").asText()).isEqualTo("hetgpu.io/gpu-free unreadable: gpu-free: nested deeper than 16 levels");
            assertThat(unresolvable.get("cpu-12").asText()).isEqualTo("node has no GPUs, pod needs 4");
            assertThat(filter.body().get("FailedNodes").size()).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void theReasonsAreTheSameInBothForms(Form form) {
        try (var cluster = new WireCluster(form, NODES); var other = new WireCluster(other(form), NODES)) {
            assertThat(cluster.ask("filter", WireCluster.GPU_POD).body().get("FailedAndUnresolvableNodes"))
                    .isEqualTo(other.ask("filter", WireCluster.GPU_POD).body().get("FailedAndUnresolvableNodes"));
        }
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void aGpuPodIsScoredEverywhereWithZeroOnThePoisonedNodes(Form form) {
        try (var cluster = new WireCluster(form, NODES)) {
            var scores = scores(cluster.ask("prioritize", WireCluster.GPU_POD));

            assertThat(scores).containsOnlyKeys("dgx-v100-07", "wide-65", "deep-inventory", "deep-free", "cpu-12");
            assertThat(scores.get("dgx-v100-07")).isPositive();
            POISONED.forEach(name -> assertThat(scores.get(name)).as(name).isZero());
        }
    }

    /**
     * A CPU pod does not need a node's GPUs: a node whose GPU annotations cannot be read keeps it, scored
     * as a GPU node (last), while CPU nodes rank first.
     */
    @ParameterizedTest
    @EnumSource(Form.class)
    void aCpuPodIsJudgedOnEveryNodeAndSteeredToTheCpuNode(Form form) {
        try (var cluster = new WireCluster(form, NODES)) {
            var filter = cluster.ask("filter", WireCluster.CPU_POD);
            assertThat(filter.status()).isEqualTo(200);
            assertThat(filter.body().get("Error").asText()).isEmpty();
            assertThat(keptNames(filter, form)).containsExactly("dgx-v100-07", "wide-65", "deep-inventory", "deep-free", "cpu-12");

            var prioritize = cluster.ask("prioritize", WireCluster.CPU_POD);
            assertThat(prioritize.status()).isEqualTo(200);
            var scores = scores(prioritize);
            assertThat(scores.get("cpu-12")).isPositive();
            POISONED.forEach(name -> assertThat(scores.get(name)).as(name).isZero());
        }
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void eachUnreadableNodeVersionIsCountedOnceHoweverOftenItIsAsked(Form form) {
        try (var cluster = new WireCluster(form, NODES)) {
            for (int i = 0; i < 3; i++) {
                cluster.ask("filter", WireCluster.GPU_POD);
                cluster.ask("prioritize", WireCluster.CPU_POD);
            }
            assertThat(cluster.metrics()).contains("hetgpu_extender_unreadable_nodes_total 3.0");
        }
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void aNameGivenTwiceIsAnsweredOnceAndAnEmptyNameIsRefusedAlone(Form form) {
        var nameless = WireCluster.node(null, Map.of(), Map.of(), null);
        try (var cluster = new WireCluster(form, List.of(DGX, CPU, DEEP_INVENTORY, nameless))) {
            var asked = List.of("dgx-v100-07", "cpu-12", "dgx-v100-07", "deep-inventory", "", "deep-inventory", "cpu-12", "");

            var filter = cluster.ask("filter", WireCluster.GPU_POD, asked);
            assertThat(filter.status()).isEqualTo(200);
            assertThat(filter.body().get("Error").asText()).isEmpty();
            assertThat(keptNames(filter, form)).containsExactly("dgx-v100-07");
            var unresolvable = filter.body().get("FailedAndUnresolvableNodes");
            assertThat(fieldNames(unresolvable)).containsExactly("cpu-12", "deep-inventory", "");
            assertThat(unresolvable.get("").asText()).isEqualTo(ExtenderService.UNNAMED_NODE);
            assertThat(scores(cluster.ask("prioritize", WireCluster.GPU_POD, asked)))
                    .containsOnlyKeys("dgx-v100-07", "cpu-12", "deep-inventory", "").containsEntry("", 0);

            var cpuPod = cluster.ask("filter", WireCluster.CPU_POD, asked);
            assertThat(keptNames(cpuPod, form)).containsExactly("dgx-v100-07", "cpu-12", "deep-inventory");
            assertThat(fieldNames(cpuPod.body().get("FailedAndUnresolvableNodes"))).containsExactly("");
        }
    }

    static List<String> fieldNames(com.fasterxml.jackson.databind.JsonNode object) {
        var names = new java.util.ArrayList<String>();
        object.fieldNames().forEachRemaining(names::add);
        return names;
    }

    static List<String> keptNames(WireCluster.Answer filter, Form form) {
        var names = new java.util.ArrayList<String>();
        if (form == Form.NODES) {
            filter.body().get("Nodes").get("items").forEach(node -> names.add(node.get("metadata").get("name").asText()));
        } else {
            filter.body().get("NodeNames").forEach(name -> names.add(name.asText()));
        }
        return names;
    }

    static Map<String, Integer> scores(WireCluster.Answer prioritize) {
        assertThat(prioritize.status()).isEqualTo(200);
        var scores = new HashMap<String, Integer>();
        prioritize.body().forEach(entry -> assertThat(scores.put(entry.get("Host").asText(), entry.get("Score").asInt()))
                .as("each host once").isNull());
        return scores;
    }

    private static Form other(Form form) {
        return form == Form.NODES ? Form.NODE_NAMES : Form.NODES;
    }
}
