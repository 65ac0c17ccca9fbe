package io.hetgpu.extender.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Taint;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which nodes count as taking new pods: where preemption could free GPUs that kube-scheduler would then give a pod. */
class NodeFactsTest {

    private static Node node(Boolean unschedulable, Taint... taints) {
        return new NodeBuilder().withNewMetadata().withName("v100-1").withResourceVersion("3").endMetadata()
                .withNewSpec().withUnschedulable(unschedulable).withTaints(List.of(taints)).endSpec().build();
    }

    private static Taint taint(String key, String effect) {
        return new Taint(effect, key, null, null);
    }

    @Test
    void aReadyUntaintedNodeTakesNewPods() {
        assertThat(NodeFacts.of(node(null)).takesNewPods()).isTrue();
        assertThat(NodeFacts.of(new NodeBuilder().withNewMetadata().withName("bare").endMetadata().build()).takesNewPods()).isTrue();
        assertThat(NodeFacts.of(node(false, taint("example.com/maintenance", "PreferNoSchedule"))).takesNewPods())
                .as("a preference is no refusal").isTrue();
    }

    @Test
    void aCordonedUnreachableOrTaintedNodeDoesNot() {
        assertThat(NodeFacts.of(node(true)).takesNewPods()).as("cordoned").isFalse();
        assertThat(NodeFacts.of(node(false, taint("node.kubernetes.io/unreachable", "NoSchedule"))).takesNewPods()).isFalse();
        assertThat(NodeFacts.of(node(false, taint("node.kubernetes.io/not-ready", "NoExecute"))).takesNewPods()).isFalse();
    }

    @Test
    void theGpuResourcesOwnTaintIsOneGpuPodsTolerate() {
        assertThat(NodeFacts.of(node(false, taint("nvidia.com/gpu", "NoSchedule"))).takesNewPods()).isTrue();
        assertThat(NodeFacts.of(node(false, taint("nvidia.com/gpu", "NoSchedule")), "example.com/gpu").takesNewPods()).isFalse();
    }
}
