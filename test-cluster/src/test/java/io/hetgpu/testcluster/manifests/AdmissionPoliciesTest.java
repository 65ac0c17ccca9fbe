package io.hetgpu.testcluster.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.testcluster.manifests.AdmissionPolicyEvaluation.Allowed;
import io.hetgpu.testcluster.manifests.AdmissionPolicyEvaluation.Denied;
import io.hetgpu.testcluster.manifests.AdmissionPolicyEvaluation.NotMatched;
import io.hetgpu.testcluster.manifests.AdmissionPolicyEvaluation.Update;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The admission policies that narrow what RBAC grants, rendered by {@code kubectl kustomize} and evaluated with CEL
 * against the requests they are there to allow and to refuse: the device plugin's (shipped) and the checkpoint
 * writer's (a sample).
 */
class AdmissionPoliciesTest {

    private static final String PLUGIN = "system:serviceaccount:hetgpu-system:hetgpu-device-plugin";
    private static final String WRITER = "system:serviceaccount:ml:hetgpu-checkpoint-writer";

    private final ValidatingAdmissionPolicy ownNode = Kubectl.kustomize(ManifestTree.ROOT)
            .one(ValidatingAdmissionPolicy.class, "hetgpu-device-plugin-own-node");
    private final ValidatingAdmissionPolicy ownPod = Kubectl.kustomize(ManifestTree.SAMPLES)
            .one(ValidatingAdmissionPolicy.class, "hetgpu-checkpoint-writer-own-pod");

    @Test
    void theDevicePluginMayWriteOnlyHetgpuKeysOnItsOwnNode() {
        var node = node("gpu-1");
        var published = edit(node, n -> new NodeBuilder(n).editMetadata().addToLabels(HetgpuKeys.LABEL_GPU_MODEL, "A100")
                .addToAnnotations(HetgpuKeys.ANNOTATION_FREE, "{}").endMetadata().build());
        assertThat(asPlugin("gpu-1", "", node, published)).isEqualTo(new Allowed());

        assertThat(asPlugin("gpu-2", "", node, published)).isInstanceOfSatisfying(Denied.class,
                denied -> assertThat(denied.message()).contains("only the Node its pod runs on (gpu-2), not gpu-1"));
        assertThat(asPlugin("", "", node, published)).isInstanceOfSatisfying(Denied.class,
                denied -> assertThat(denied.message()).contains("its token names no node"));
        assertThat(asPlugin("gpu-1", "status", node, published)).isInstanceOf(Denied.class);
        assertThat(asPlugin("gpu-1", "", node, edit(node, n -> new NodeBuilder(n).editMetadata().addToLabels("node-role.kubernetes.io/control-plane", "")
                .endMetadata().build()))).isInstanceOfSatisfying(Denied.class, denied -> assertThat(denied.message()).contains("only hetgpu.io/ labels"));
        assertThat(asPlugin("gpu-1", "", node, edit(node, n -> new NodeBuilder(n).editMetadata().removeFromLabels("kubernetes.io/hostname")
                .endMetadata().build()))).isInstanceOf(Denied.class);
        assertThat(asPlugin("gpu-1", "", node, edit(node, n -> new NodeBuilder(n).editSpec().withUnschedulable(true).endSpec().build())))
                .isInstanceOfSatisfying(Denied.class, denied -> assertThat(denied.message()).contains("spec"));
        // Anyone else is not this policy's business.
        assertThat(AdmissionPolicyEvaluation.evaluate(ownNode, new Update("system:node:gpu-1", Map.of(), "", node,
                edit(node, n -> new NodeBuilder(n).editSpec().withUnschedulable(true).endSpec().build())))).isEqualTo(new NotMatched());
    }

    @Test
    void aCheckpointWriterMayRecordOnlyItsOwnPodsCheckpoint() {
        var pod = pod("resnet50-worker-0-x7k2p");
        var recorded = edit(pod, p -> new PodBuilder(p).editMetadata().addToAnnotations(HetgpuKeys.POD_CHECKPOINTED_AT, "2026-11-25T18:00:00Z")
                .endMetadata().build());
        assertThat(asWriter("resnet50-worker-0-x7k2p", "", pod, recorded)).isEqualTo(new Allowed());
        var again = edit(recorded, p -> new PodBuilder(p).editMetadata().addToAnnotations(HetgpuKeys.POD_CHECKPOINTED_AT, "2026-11-25T18:30:00Z")
                .endMetadata().build());
        assertThat(asWriter("resnet50-worker-0-x7k2p", "", recorded, again)).isEqualTo(new Allowed());

        // Another pod's checkpoint would make the preempt verb evict it as if it had just saved.
        assertThat(asWriter("resnet50-worker-1-q9z4m", "", pod, recorded)).isInstanceOfSatisfying(Denied.class,
                denied -> assertThat(denied.message()).contains("only its own pod (resnet50-worker-1-q9z4m), not resnet50-worker-0-x7k2p"));
        assertThat(asWriter("", "", pod, recorded)).isInstanceOfSatisfying(Denied.class,
                denied -> assertThat(denied.message()).contains("its token names no pod"));
        assertThat(asWriter("resnet50-worker-0-x7k2p", "", pod, edit(pod, p -> new PodBuilder(p).editMetadata()
                .addToAnnotations(HetgpuKeys.POD_GPU_PREFERENCE, "newest").endMetadata().build())))
                .isInstanceOfSatisfying(Denied.class, denied -> assertThat(denied.message()).contains("only the hetgpu.io/checkpointed-at annotation"));
        assertThat(asWriter("resnet50-worker-0-x7k2p", "", pod, edit(pod, p -> new PodBuilder(p).editMetadata()
                .addToLabels(HetgpuKeys.POD_JOB, "someone-else").endMetadata().build())))
                .isInstanceOfSatisfying(Denied.class, denied -> assertThat(denied.message()).contains("labels"));
        assertThat(asWriter("resnet50-worker-0-x7k2p", "status", pod, recorded)).isInstanceOf(Denied.class);
        // Other accounts are left to RBAC and to their own policies.
        assertThat(AdmissionPolicyEvaluation.evaluate(ownPod, new Update("system:serviceaccount:ml:default", Map.of(), "", pod, recorded)))
                .isEqualTo(new NotMatched());
    }

    private AdmissionPolicyEvaluation.Outcome asPlugin(String tokenNode, String subResource, Node old, Node updated) {
        var extra = tokenNode.isEmpty() ? Map.<String, List<String>>of() : Map.of("authentication.kubernetes.io/node-name", List.of(tokenNode));
        return AdmissionPolicyEvaluation.evaluate(ownNode, new Update(PLUGIN, extra, subResource, old, updated));
    }

    private AdmissionPolicyEvaluation.Outcome asWriter(String tokenPod, String subResource, Pod old, Pod updated) {
        var extra = tokenPod.isEmpty() ? Map.<String, List<String>>of() : Map.of("authentication.kubernetes.io/pod-name", List.of(tokenPod));
        return AdmissionPolicyEvaluation.evaluate(ownPod, new Update(WRITER, extra, subResource, old, updated));
    }

    private static Node node(String name) {
        return new NodeBuilder().withNewMetadata().withName(name).addToLabels("kubernetes.io/hostname", name)
                .addToAnnotations("node.alpha.kubernetes.io/ttl", "0").endMetadata()
                .withNewSpec().withPodCIDR("10.0.1.0/24").endSpec().build();
    }

    private static Pod pod(String name) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace("ml").addToLabels("batch.kubernetes.io/job-name", "resnet50-worker")
                .addToAnnotations("batch.kubernetes.io/job-completion-index", "0").endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").withNodeName("dgx-a100-1").addNewContainer().withName("train").withImage("train")
                .endContainer().endSpec().build();
    }

    private static <T> T edit(T object, UnaryOperator<T> change) {
        return change.apply(object);
    }
}
