package io.hetgpu.extender.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.ForwardingClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.SnapshotClusterView;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.DisruptionBudgets;
import io.hetgpu.extender.model.LabelSelection;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.http.PreemptionCodec;
import io.hetgpu.extender.policy.ScoreWeights;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The preempt verb keeps a node only if evicting the proposed victims frees a GPU set the preemptor can use.
 * The training pod fixture asks for 4 V100 or A100 with NVLink.
 */
class PreemptionTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String POD = KubeJson.text("pod-pytorch-worker.json");

    /** Full nodes: a DGX-1 with four 2-GPU pods (bound in order), a 4x V100 PCIe server and a T4 server with two each. */
    /** What the preempt verb said about each answer, as Events and metrics hear it. */
    private final List<PreemptionAdvice> advised = new java.util.ArrayList<>();
    private final ExtenderVerbs verbs = verbs(cluster(), advised::add);
    /** Bodies in and out as the HTTP server reads and writes them. */
    private final PreemptionCodec codec = new PreemptionCodec();

    @Test
    void keepsANodeWhereTheVictimsFreeAnNvlinkSet() throws Exception {
        // The allocator gives the first pods 0+3, 1+2 (NV2 pairs), so evicting both frees the 0-1-2-3 quad.
        var result = preempt(meta(Map.of("dgx", List.of("w0", "w1"))));
        assertThat(result.get("NodeNameToMetaVictims").get("dgx").get("Pods").get(0).get("UID").asText()).isEqualTo("w0");
        assertThat(result.get("NodeNameToMetaVictims").get("dgx").get("NumPDBViolations").asInt()).isEqualTo(1);
    }

    @Test
    void refusesVictimsThatFreeTooFewOrNoNvlinkSet() throws Exception {
        assertThat(preempt(meta(Map.of("dgx", List.of("w0")))).get("NodeNameToMetaVictims").size()).isZero();
        // The right cards, enough of them once both pods go, but PCIe only: no NVLink set to free.
        assertThat(preempt(meta(Map.of("pcie", List.of("p0", "p1")))).get("NodeNameToMetaVictims").size()).isZero();
    }

    @Test
    void eachAnswerIsExplainedWithWhatItFreesAndWhyTheOthersWereRefused() throws Exception {
        preempt(meta(Map.of("dgx", List.of("w0", "w1"), "t4", List.of("t0", "t1"))));
        assertThat(advised).singleElement().satisfies(advice -> {
            assertThat(advice.kept()).singleElement().satisfies(kept -> {
                assertThat(kept.node()).isEqualTo("dgx");
                assertThat(kept.victims()).isEqualTo(2);
                assertThat(kept.freed()).isEqualTo("4 V100 (NVLink)");
            });
            assertThat(advice.refused()).containsOnlyKeys("t4");
            assertThat(advice.explain()).startsWith("hetgpu kept 1 of 2 nodes proposed for preemption: evicting 2 pods on dgx frees 4 V100 (NVLink); ")
                    .contains("GPU-hours lost since their last checkpoint");
        });
    }

    @Test
    void refusesVictimsOnNodesWithTheWrongCards() throws Exception {
        assertThat(preempt(meta(Map.of("t4", List.of("t0", "t1")))).get("NodeNameToMetaVictims").size()).isZero();
    }

    @Test
    void acceptsFullVictimPodsAsKubeSchedulerSendsWithoutNodeCache() throws Exception {
        var victim = "{\"metadata\":{\"name\":\"w0\",\"namespace\":\"ml\",\"uid\":\"w0\"}}";
        var victim2 = "{\"metadata\":{\"name\":\"w1\",\"namespace\":\"ml\",\"uid\":\"w1\"}}";
        var body = "{\"Pod\":" + POD + ",\"NodeNameToVictims\":{\"dgx\":{\"Pods\":[" + victim + "," + victim2
                + "],\"NumPDBViolations\":0}},\"NodeNameToMetaVictims\":null}";
        var result = JSON.readTree(answer(body));
        assertThat(result.get("NodeNameToMetaVictims").get("dgx").get("Pods")).hasSize(2);
    }

    @Test
    void aCheckpointFromBeforeItsPodStartedCountsFromTheStartSoTheVictimsThatReallyLoseLeastAreKept() throws Exception {
        var twoDgx = twoFullDgx();
        var verbs = verbs(twoDgx, advice -> { });
        var now = java.time.Instant.now();
        // dgx-a's victims started an hour ago, one claiming a checkpoint of 1970; dgx-b's have run three hours unsaved.
        var hourAgo = now.minus(java.time.Duration.ofHours(1)).toString();
        var threeHoursAgo = now.minus(java.time.Duration.ofHours(3)).toString();
        var body = "{\"Pod\":" + POD + ",\"NodeNameToVictims\":{"
                + "\"dgx-a\":{\"Pods\":[" + victim("a0", hourAgo, "1970-01-01T00:00:00Z") + "," + victim("a1", hourAgo, null)
                + "],\"NumPDBViolations\":0},"
                + "\"dgx-b\":{\"Pods\":[" + victim("b0", threeHoursAgo, null) + "," + victim("b1", threeHoursAgo, null)
                + "],\"NumPDBViolations\":0}},\"NodeNameToMetaVictims\":null}";

        var result = JSON.readTree(codec.write(verbs.preemption().answer(codec.read(body.getBytes()))));

        // 4 GPU-hours lost on dgx-a against 12 on dgx-b; read as 56 years, the checkpoint had sent the eviction to dgx-b.
        assertThat(result.get("NodeNameToMetaVictims").properties()).extracting(Map.Entry::getKey).containsExactly("dgx-a");
    }

    @Test
    void podsABudgetGuardsCountAsKeptBesideTheVictimsSoTheUrgentPodIsGatheredWhereTheyRun() throws Exception {
        // dgx-a's other pods are guarded by a budget that allows no disruption: evicting a0 and a1 leaves 4 GPUs held
        // there for good, as the eviction floor counts them; dgx-b's other pods could go later. Same victims' work on both.
        var guarded = Set.of("a2", "a3");
        var budgets = DisruptionBudgets.of(List.of(new DisruptionBudgets.Budget("ml",
                new LabelSelection(Map.of("budget", "guarded"), List.of()), 0, Set.of())));
        var cluster = new ForwardingClusterView(twoFullDgx()) {
            @Override
            public DisruptionBudgets budgets() {
                return budgets;
            }

            @Override
            public DisruptionBudgets.PodLabels budgetLabelsOf(String uid) {
                return new DisruptionBudgets.PodLabels("ml", uid, guarded.contains(uid) ? Map.of("budget", "guarded") : Map.of());
            }
        };
        var advice = new java.util.ArrayList<PreemptionAdvice>();
        var verbs = verbs(cluster, advice::add);
        var start = java.time.Instant.now().minus(java.time.Duration.ofHours(1)).toString();
        var body = "{\"Pod\":" + POD + ",\"NodeNameToVictims\":{"
                + "\"dgx-a\":{\"Pods\":[" + victim("a0", start, null) + "," + victim("a1", start, null) + "],\"NumPDBViolations\":0},"
                + "\"dgx-b\":{\"Pods\":[" + victim("b0", start, null) + "," + victim("b1", start, null) + "],\"NumPDBViolations\":0}},"
                + "\"NodeNameToMetaVictims\":null}";

        var result = JSON.readTree(codec.write(verbs.preemption().answer(codec.read(body.getBytes()))));

        assertThat(result.get("NodeNameToMetaVictims").properties()).extracting(Map.Entry::getKey).containsExactly("dgx-a");
        assertThat(advice).singleElement().satisfies(one -> assertThat(one.refused())
                .containsEntry("dgx-b", "fewer GPUs held by pods it cannot evict than another candidate (urgent pods are gathered, keeping other nodes whole)"));
    }

    /** A victim as kube-scheduler sends it without a node cache: the whole pod, with its start and any checkpoint. */
    private static String victim(String uid, String startTime, String checkpointedAt) {
        var annotations = checkpointedAt == null ? "" : ",\"annotations\":{\"hetgpu.io/checkpointed-at\":\"" + checkpointedAt + "\"}";
        return "{\"metadata\":{\"name\":\"" + uid + "\",\"namespace\":\"ml\",\"uid\":\"" + uid + "\"" + annotations
                + "},\"status\":{\"phase\":\"Running\",\"startTime\":\"" + startTime + "\"}}";
    }

    /** Two DGX-1s with every GPU held by four 2-GPU pods each, bound in order. */
    private static ClusterView twoFullDgx() {
        var a = TestTopologies.dgx1V100("dgx-a");
        var b = TestTopologies.dgx1V100("dgx-b");
        var at = TestTopologies.READ_AT;
        var snapshot = NodeSnapshot.of(
                List.of(new NodeFacts("dgx-a", "1", Map.of(), TestTopologies.inventory(a), TestTopologies.free(a)),
                        new NodeFacts("dgx-b", "1", Map.of(), TestTopologies.inventory(b), TestTopologies.free(b))),
                Map.of("dgx-a", List.of(new BoundPod("a0", 2, true, at.minusSeconds(40)), new BoundPod("a1", 2, true, at.minusSeconds(30)),
                                new BoundPod("a2", 2, true, at.minusSeconds(20)), new BoundPod("a3", 2, true, at.minusSeconds(10))),
                        "dgx-b", List.of(new BoundPod("b0", 2, true, at.minusSeconds(40)), new BoundPod("b1", 2, true, at.minusSeconds(30)),
                                new BoundPod("b2", 2, true, at.minusSeconds(20)), new BoundPod("b3", 2, true, at.minusSeconds(10)))));
        return new SnapshotClusterView(() -> snapshot);
    }

    @Test
    void aNullPodIsAnError() {
        assertThatThrownBy(() -> codec.read("{\"Pod\":null,\"NodeNameToMetaVictims\":{}}".getBytes()))
                .hasMessage(ExtenderService.NULL_POD);
    }

    private byte[] answer(String body) throws Exception {
        return codec.write(verbs.preemption().answer(codec.read(body.getBytes())));
    }

    private JsonNode preempt(String body) throws Exception {
        return JSON.readTree(answer(body));
    }

    private static String meta(Map<String, List<String>> victims) {
        var entries = victims.entrySet().stream().map(entry -> "\"" + entry.getKey() + "\":{\"Pods\":["
                + String.join(",", entry.getValue().stream().map(uid -> "{\"UID\":\"" + uid + "\"}").toList())
                + "],\"NumPDBViolations\":1}").toList();
        return "{\"Pod\":" + POD + ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{" + String.join(",", entries) + "}}";
    }

    private static ExtenderVerbs verbs(ClusterView cluster, java.util.function.Consumer<PreemptionAdvice> onAdvised) {
        var catalog = CardCatalog.defaults();
        return ExtenderVerbs.of(cluster, new PodRequestParser("nvidia.com/gpu", catalog), new NodeStateFactory(catalog, "rack"),
                new PlacementPolicy(PolicySettings.DEFAULTS), (pod, table) -> { }, onAdvised);
    }

    /** An in-memory cluster: every GPU held, pods bound one after another before the free list was read. */
    private static ClusterView cluster() {
        var dgx = TestTopologies.dgx1V100("dgx");
        var t4 = TestTopologies.t4x4("t4");
        var pcie = TestTopologies.v100Pcie("pcie", 4);
        var at = TestTopologies.READ_AT;
        var snapshot = NodeSnapshot.of(
                List.of(new NodeFacts("dgx", "1", Map.of(), TestTopologies.inventory(dgx), TestTopologies.free(dgx)),
                        new NodeFacts("pcie", "1", Map.of(), TestTopologies.inventory(pcie), TestTopologies.free(pcie)),
                        new NodeFacts("t4", "1", Map.of(), TestTopologies.inventory(t4), TestTopologies.free(t4))),
                Map.of("dgx", List.of(new BoundPod("w0", 2, true, at.minusSeconds(40)), new BoundPod("w1", 2, true, at.minusSeconds(30)),
                                new BoundPod("w2", 2, true, at.minusSeconds(20)), new BoundPod("w3", 2, true, at.minusSeconds(10))),
                        "pcie", List.of(new BoundPod("p0", 2, false, at.minusSeconds(20)), new BoundPod("p1", 2, false, at.minusSeconds(10))),
                        "t4", List.of(new BoundPod("t0", 2, false, at.minusSeconds(20)), new BoundPod("t1", 2, false, at.minusSeconds(10)))));
        return new SnapshotClusterView(() -> snapshot);
    }
}
