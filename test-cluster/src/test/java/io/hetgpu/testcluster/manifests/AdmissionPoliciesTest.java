package io.hetgpu.testcluster.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.BindingBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.hetgpu.deviceplugin.node.NodeLabels;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.testcluster.manifests.AdmissionPolicyEvaluation.Allowed;
import io.hetgpu.testcluster.manifests.AdmissionPolicyEvaluation.Denied;
import io.hetgpu.testcluster.manifests.AdmissionPolicyEvaluation.NotMatched;
import io.hetgpu.testcluster.manifests.AdmissionPolicyEvaluation.Request;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The admission policies that narrow what RBAC grants, rendered by {@code kubectl kustomize} (and the shipped ones by
 * the chart too) and evaluated with CEL against the requests they are there to allow and to refuse: the device
 * plugin's own-node policy, the record of a pod's GPUs that only the extender writes, the keys on a Node that only the
 * device plugin writes (shipped), and the checkpoint writer's (a sample).
 */
class AdmissionPoliciesTest {

    private static final String PLUGIN = "system:serviceaccount:hetgpu-system:hetgpu-device-plugin";
    private static final String WRITER = "system:serviceaccount:ml:hetgpu-checkpoint-writer";
    private static final String POD_GPU_DEVICES = "hetgpu-pod-gpu-devices";
    private static final String NODE_GPU_KEYS = "hetgpu-node-gpu-keys";
    private static final String RECORD = "{\"node\":\"dgx-a100-1\",\"devices\":[\"GPU-0\",\"GPU-1\"],\"boundAt\":\"2026-11-25T18:00:00Z\"}";
    /** A cluster that serves ValidatingAdmissionPolicy v1, where the chart renders the policies. */
    private static final String KUBE = "1.37.1";

    private final AdmissionPolicyEvaluation ownNode = AdmissionPolicyEvaluation.of(Kubectl.kustomize(ManifestTree.ROOT)
            .one(ValidatingAdmissionPolicy.class, "hetgpu-device-plugin-own-node"));
    private final AdmissionPolicyEvaluation ownPod = AdmissionPolicyEvaluation.of(Kubectl.kustomize(ManifestTree.SAMPLES)
            .one(ValidatingAdmissionPolicy.class, "hetgpu-checkpoint-writer-own-pod"));

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
        assertThat(ownNode.evaluate(Request.update("nodes", "", "system:node:gpu-1", node,
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
        assertThat(ownPod.evaluate(Request.update("pods", "", "system:serviceaccount:ml:default", pod, recorded)))
                .isEqualTo(new NotMatched());
    }

    /** The shipped policies as each way to install renders them, and the namespace of the accounts they name. */
    record Install(String name, Rendering rendering, String namespace) {
        AdmissionPolicyEvaluation policy(String policyName) {
            return AdmissionPolicyEvaluation.of(rendering.one(ValidatingAdmissionPolicy.class, policyName));
        }

        String account(String serviceAccount) {
            return "system:serviceaccount:" + namespace + ":" + serviceAccount;
        }

        /** Callers that are not hetgpu: users, a namespace's accounts (one named as hetgpu's), hetgpu's accounts of another namespace. */
        List<String> outsiders(String hetgpuAccount) {
            var other = namespace.equals("hetgpu-system") ? "gpu-scheduling" : "hetgpu-system";
            return List.of("alice", "kubernetes-admin", "system:serviceaccount:ml:default", "system:serviceaccount:ml:" + hetgpuAccount,
                    "system:serviceaccount:" + other + ":" + hetgpuAccount, "system:node:gpu-1");
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** One write to an object, before and after. */
    record Change<T>(String what, T before, T after) {
    }

    static Stream<Install> installs() {
        return Stream.of(new Install("kustomize", Kubectl.kustomize(ManifestTree.ROOT), "hetgpu-system"),
                new Install("chart", HelmChart.render(KUBE, ""), "hetgpu-system"),
                new Install("chart in namespace gpu-scheduling", HelmChart.render(KUBE, "namespace: {name: gpu-scheduling}"), "gpu-scheduling"));
    }

    @ParameterizedTest
    @MethodSource("installs")
    void everyShippedPolicyIsBoundToDeny(Install install) {
        var policies = install.rendering().all(ValidatingAdmissionPolicy.class);
        assertThat(policies).extracting(p -> p.getMetadata().getName())
                .containsExactlyInAnyOrder("hetgpu-device-plugin-own-node", POD_GPU_DEVICES, NODE_GPU_KEYS);
        for (var policy : policies) {
            var binding = install.rendering().one(ValidatingAdmissionPolicyBinding.class, policy.getMetadata().getName());
            assertThat(binding.getSpec().getPolicyName()).isEqualTo(policy.getMetadata().getName());
            assertThat(binding.getSpec().getValidationActions()).containsExactly("Deny");
            assertThat(policy.getSpec().getFailurePolicy()).isEqualTo("Fail");
        }
    }

    @ParameterizedTest
    @MethodSource("installs")
    void noPodIsCreatedWithAGpuDevicesRecordWhoeverCreatesIt(Install install) {
        var policy = install.policy(POD_GPU_DEVICES);
        var pod = withRecord(pendingPod(), RECORD);
        var creators = new ArrayList<>(install.outsiders("hetgpu-scheduler"));
        // A controller creates pods from a template a user wrote; the extender itself never creates pods.
        creators.addAll(List.of("system:serviceaccount:kube-system:job-controller", install.account("hetgpu-scheduler")));
        for (var creator : creators) {
            assertThat(policy.evaluate(Request.create("pods", "", creator, pod))).as(creator)
                    .isInstanceOfSatisfying(Denied.class, denied -> assertThat(denied.message())
                            .contains("metadata.annotations['hetgpu.io/gpu-devices']: a pod is never created with it (created by " + creator + ")"));
        }
        var userKeys = new PodBuilder(pendingPod()).editMetadata().addToAnnotations(HetgpuKeys.POD_GPU_MIN_MODEL, "A100")
                .addToLabels(HetgpuKeys.POD_JOB, "resnet50").endMetadata().build();
        assertThat(policy.evaluate(Request.create("pods", "", "alice", userKeys))).isEqualTo(new NotMatched());
    }

    @ParameterizedTest
    @MethodSource("installs")
    void onlyTheExtenderAddsChangesOrRemovesAPodsGpuDevicesRecord(Install install) {
        var policy = install.policy(POD_GPU_DEVICES);
        var pending = pendingPod();
        var recorded = withRecord(pending, RECORD);
        var changes = List.of(new Change<>("adds", pending, recorded),
                new Change<>("changes", recorded, withRecord(pending, RECORD.replace("GPU-0", "GPU-7"))),
                new Change<>("removes", recorded, pending));
        var extender = install.account("hetgpu-scheduler");
        for (var change : changes) {
            assertThat(policy.evaluate(Request.update("pods", "", extender, change.before(), change.after())))
                    .as("the extender " + change.what() + " it").isEqualTo(new Allowed());
            for (var caller : install.outsiders("hetgpu-scheduler")) {
                for (var subResource : List.of("", "status")) {
                    assertThat(policy.evaluate(Request.update("pods", subResource, caller, change.before(), change.after())))
                            .as(caller + " " + change.what() + " it through pods" + (subResource.isEmpty() ? "" : "/" + subResource))
                            .isInstanceOfSatisfying(Denied.class, denied -> assertThat(denied.message()).isEqualTo(
                                    "metadata.annotations['hetgpu.io/gpu-devices']: only hetgpu's scheduler extender (" + extender
                                            + ") adds, changes or removes it, not " + caller));
                }
            }
        }
        // A Binding's annotations are copied onto the pod it binds.
        var binding = new BindingBuilder().withNewMetadata().withName("resnet50-worker-0-x7k2p").withNamespace("ml")
                .addToAnnotations(HetgpuKeys.POD_GPU_DEVICES, RECORD).endMetadata()
                .withNewTarget().withKind("Node").withName("dgx-a100-1").endTarget().build();
        for (var bind : List.of(Request.create("pods", "binding", "system:kube-scheduler", binding),
                Request.create("bindings", "", "system:kube-scheduler", binding))) {
            assertThat(policy.evaluate(bind)).as("a Binding through " + bind.ruleResource()).isInstanceOf(Denied.class);
        }
        var plainBinding = new BindingBuilder(binding).editMetadata().withAnnotations(Map.of()).endMetadata().build();
        assertThat(policy.evaluate(Request.create("pods", "binding", "system:kube-scheduler", plainBinding)))
                .isEqualTo(new NotMatched());
    }

    @ParameterizedTest
    @MethodSource("installs")
    void podWritesThatLeaveTheRecordAloneAreNotMatched(Install install) {
        var policy = install.policy(POD_GPU_DEVICES);
        var bound = withRecord(pod("resnet50-worker-0-x7k2p"), RECORD);
        var writes = List.of(
                Request.update("pods", "", "alice", bound, new PodBuilder(bound).editMetadata()
                        .addToAnnotations(HetgpuKeys.POD_CHECKPOINTED_AT, "2026-11-25T18:00:00Z").endMetadata().build()),
                Request.update("pods", "", "system:serviceaccount:kube-system:job-controller", bound, new PodBuilder(bound).editMetadata()
                        .addToLabels("batch.kubernetes.io/controller-uid", "3f1c").addToFinalizers("batch.kubernetes.io/job-tracking").endMetadata().build()),
                Request.update("pods", "status", "system:node:dgx-a100-1", bound, new PodBuilder(bound).withNewStatus().withPhase("Running").endStatus().build()),
                Request.update("pods", "", install.account("hetgpu-scheduler"), bound, new PodBuilder(bound).editMetadata()
                        .addToLabels("team", "vision").endMetadata().build()),
                // These subresources reset a pod's metadata before admission: the record cannot change through them.
                Request.update("pods", "ephemeralcontainers", "alice", bound, withRecord(bound, RECORD.replace("GPU-0", "GPU-7"))),
                Request.update("pods", "resize", "alice", bound, withRecord(bound, RECORD.replace("GPU-0", "GPU-7"))));
        for (var write : writes) {
            assertThat(policy.evaluate(write)).as(write.username() + " on " + write.ruleResource())
                    .isEqualTo(new NotMatched());
        }
    }

    @ParameterizedTest
    @MethodSource("installs")
    void onlyTheDevicePluginSetsChangesOrRemovesTheKeysItPublishesOnANode(Install install) {
        var policy = install.policy(NODE_GPU_KEYS);
        var plugin = install.account("hetgpu-device-plugin");
        var callers = new ArrayList<>(install.outsiders("hetgpu-device-plugin"));
        callers.add("system:node:dgx-a100-1");
        var bare = node("dgx-a100-1");
        var published = new ArrayList<UnaryOperator<Node>>();
        for (var key : List.of(HetgpuKeys.ANNOTATION_INVENTORY, HetgpuKeys.ANNOTATION_FREE)) {
            published.add(n -> new NodeBuilder(n).editMetadata().addToAnnotations(key, "{\"devices\":[]}").endMetadata().build());
        }
        for (var key : NodeLabels.OWNED) {
            published.add(n -> new NodeBuilder(n).editMetadata().addToLabels(key, "8").endMetadata().build());
        }
        for (var publish : published) {
            var with = publish.apply(bare);
            var changed = new NodeBuilder(with).editMetadata().withAnnotations(values(with.getMetadata().getAnnotations(), "{}"))
                    .withLabels(values(with.getMetadata().getLabels(), "4")).endMetadata().build();
            for (var change : List.of(new Change<>("sets", bare, with), new Change<>("changes", with, changed), new Change<>("removes", with, bare))) {
                var what = change.what() + " " + keys(with);
                assertThat(policy.evaluate(Request.update("nodes", "", plugin, change.before(), change.after())))
                        .as("the device plugin " + what).isEqualTo(new Allowed());
                for (var caller : callers) {
                    for (var subResource : List.of("", "status")) {
                        assertThat(policy.evaluate(Request.update("nodes", subResource, caller, change.before(), change.after())))
                                .as(caller + " " + what).isInstanceOfSatisfying(Denied.class, denied -> assertThat(denied.message())
                                        .startsWith("metadata: only hetgpu's device plugin (" + plugin + ") sets, changes or removes")
                                        .endsWith(", not " + caller));
                    }
                }
            }
            // kubelet registering its Node with a published key (--node-labels) would claim GPUs no plugin reported.
            assertThat(policy.evaluate(Request.create("nodes", "", "system:node:dgx-a100-1", with)))
                    .as("a Node created with " + keys(with)).isInstanceOf(Denied.class);
        }
    }

    @ParameterizedTest
    @MethodSource("installs")
    void nodeWritesThatLeaveThePublishedKeysAloneAreNotMatched(Install install) {
        var policy = install.policy(NODE_GPU_KEYS);
        var node = new NodeBuilder(node("dgx-a100-1")).editMetadata().addToLabels(HetgpuKeys.LABEL_GPU_MODEL, "A100")
                .addToAnnotations(HetgpuKeys.ANNOTATION_FREE, "{}").endMetadata().build();
        var writes = List.of(
                Request.create("nodes", "", "system:node:dgx-a100-2", node("dgx-a100-2")),
                Request.update("nodes", "status", "system:node:dgx-a100-1", node, new NodeBuilder(node).withNewStatus()
                        .addToAllocatable("nvidia.com/gpu", new Quantity("8")).endStatus().build()),
                // The hetgpu.io/ labels an admin sets are the admin's.
                Request.update("nodes", "", "kubernetes-admin", node, new NodeBuilder(node).editMetadata().addToLabels("hetgpu.io/gpu-node", "true")
                        .addToLabels(HetgpuKeys.LABEL_RACK, "rack-a").endMetadata().build()),
                Request.update("nodes", "", "system:serviceaccount:kube-system:node-controller", node, new NodeBuilder(node).editSpec()
                        .addNewTaint().withKey("node.kubernetes.io/unreachable").withEffect("NoExecute").endTaint().endSpec().build()));
        for (var write : writes) {
            assertThat(policy.evaluate(write)).as(write.username() + " on " + write.ruleResource())
                    .isEqualTo(new NotMatched());
        }
    }

    private AdmissionPolicyEvaluation.Outcome asPlugin(String tokenNode, String subResource, Node old, Node updated) {
        var extra = tokenNode.isEmpty() ? Map.<String, List<String>>of() : Map.of("authentication.kubernetes.io/node-name", List.of(tokenNode));
        return ownNode.evaluate(Request.update("nodes", subResource, PLUGIN, extra, old, updated));
    }

    private AdmissionPolicyEvaluation.Outcome asWriter(String tokenPod, String subResource, Pod old, Pod updated) {
        var extra = tokenPod.isEmpty() ? Map.<String, List<String>>of() : Map.of("authentication.kubernetes.io/pod-name", List.of(tokenPod));
        return ownPod.evaluate(Request.update("pods", subResource, WRITER, extra, old, updated));
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

    /** A pod as its controller creates it: not bound, no record. */
    private static Pod pendingPod() {
        return new PodBuilder(pod("resnet50-worker-0-x7k2p")).editSpec().withNodeName(null).endSpec().build();
    }

    private static Pod withRecord(Pod pod, String record) {
        return new PodBuilder(pod).editMetadata().addToAnnotations(HetgpuKeys.POD_GPU_DEVICES, record).endMetadata().build();
    }

    /** Every hetgpu.io/gpu key of the map given another value. */
    private static Map<String, String> values(Map<String, String> map, String value) {
        var changed = new TreeMap<>(map);
        changed.replaceAll((key, old) -> key.startsWith(HetgpuKeys.PREFIX + "gpu") ? value : old);
        return changed;
    }

    /** The node's hetgpu.io/gpu keys, to say which a failing assertion was about. */
    private static String keys(Node node) {
        return Stream.concat(node.getMetadata().getLabels().keySet().stream(), node.getMetadata().getAnnotations().keySet().stream())
                .filter(key -> key.startsWith(HetgpuKeys.PREFIX + "gpu")).toList().toString();
    }

    private static <T> T edit(T object, UnaryOperator<T> change) {
        return change.apply(object);
    }
}
