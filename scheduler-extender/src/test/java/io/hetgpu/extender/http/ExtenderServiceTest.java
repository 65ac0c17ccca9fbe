package io.hetgpu.extender.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.FixedClusterView;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The service keeps assessments between calls; they must follow every change of the node or the pod. */
class ExtenderServiceTest {

    private final CardCatalog catalog = CardCatalog.defaults();
    private final ExtenderService service = new ExtenderService(ClusterView.REQUEST_ONLY, new PodRequestParser("nvidia.com/gpu", catalog),
            new NodeStateFactory(catalog, "topology.hetgpu.io/rack"),
            new PlacementPolicy(PriorityThresholds.DEFAULTS, ScoreWeights.DEFAULTS), (pod, table) -> { });
    private final io.hetgpu.gpu.NodeTopology dgx = TestTopologies.dgx1V100("dgx");

    @Test
    void aNewFreeListChangesTheAnswerForTheSamePod() {
        var pod = KubeJson.trainingPod();
        assertThat(filter(pod, node("1", TestTopologies.allFree(dgx))).nodes()).hasSize(1);
        assertThat(filter(pod, node("1", TestTopologies.allFree(dgx))).nodes()).hasSize(1);

        var busy = filter(pod, node("2", TestTopologies.free(dgx, 7)));
        assertThat(busy.nodes()).isEmpty();
        assertThat(busy.failedNodes()).containsEntry("dgx", "1 free V100, pod needs 4");
    }

    @Test
    void aPodOfAnotherShapeIsJudgedAfresh() {
        var node = node("1", TestTopologies.free(dgx, 0, 1));
        var small = KubeJson.trainingPod();
        small.getSpec().getContainers().getFirst().getResources().getLimits().put("nvidia.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("2"));
        small.getSpec().getContainers().getFirst().getResources().getRequests().put("nvidia.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("2"));
        assertThat(filter(small, node).nodes()).hasSize(1);
        assertThat(filter(KubeJson.trainingPod(), node).nodes()).isEmpty();
        assertThat(filter(small, node).nodes()).hasSize(1);
    }

    @Test
    void aPodBoundToAnUnchangedNodeChangesTheAnswerForNodeNames() {
        // The same facts object throughout, as an informer hands out while the node is unchanged: only the
        // pods bound to it change, and the kept state must not outlive them.
        var facts = new NodeFacts("dgx", "1", Map.of(), TestTopologies.inventory(dgx), TestTopologies.allFree(dgx));
        var bound = new java.util.concurrent.atomic.AtomicReference<List<BoundPod>>(List.of());
        var cluster = new FixedClusterView(Map.of("dgx", facts), nodeName -> bound.get());
        var withCluster = new ExtenderService(cluster, service.parser(), new NodeStateFactory(catalog, "topology.hetgpu.io/rack"),
                service.policy(), (pod, table) -> { });
        var args = new ExtenderArgs(KubeJson.trainingPod(), null, List.of("dgx"));

        assertThat(withCluster.filter(args).nodeNames()).containsExactly("dgx");
        assertThat(withCluster.filter(args).nodeNames()).containsExactly("dgx");
        bound.set(List.of(new BoundPod("uid-1", 6, false, TestTopologies.READ_AT.plusSeconds(60))));
        assertThat(withCluster.filter(args).failedNodes()).containsEntry("dgx", "2 free V100, pod needs 4");
        bound.set(List.of());
        assertThat(withCluster.filter(args).nodeNames()).containsExactly("dgx");
    }

    private FilterResult filter(Pod pod, WireNode node) {
        return service.filter(new ExtenderArgs(pod, List.of(node), null));
    }

    private WireNode node(String resourceVersion, String free) {
        var facts = new NodeFacts("dgx", resourceVersion, Map.of(), TestTopologies.inventory(dgx), free);
        return new WireNode(facts, new byte[] {'{', '}'}, 0, 2);
    }
}
