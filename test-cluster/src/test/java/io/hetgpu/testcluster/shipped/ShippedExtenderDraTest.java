package io.hetgpu.testcluster.shipped;

import static io.hetgpu.testcluster.shipped.ShippedArtifacts.SCHEDULER_EXTENDER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.profile.SimulatedGpuSource;
import io.hetgpu.testcluster.cluster.NvidiaDraSlice;
import io.hetgpu.testcluster.cluster.ResourceClaimController;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The shipped extender jar ({@code java -jar}, its pod's arguments and environment from the rendered install) against an
 * API server of a DRA cluster: GPUs only in NVIDIA-shaped ResourceSlices ({@code gpu.nvidia.com}: H100s, A100s, V100s), the
 * chart's DeviceClass serving {@code nvidia.com/gpu} too (KEP-5004), claims made from templates and a named claim allocated
 * for a running pod. Its filter and prioritize answers, asked over HTTP with the body kube-scheduler sends
 * ({@code nodeCacheCapable}: node names), give hetgpu's rules for pods that claim their GPUs. One jar for the class.
 */
@ExtendWith(ShippedClusterExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ShippedExtenderDraTest {

    private static final String NS = "default";
    private static final String H100 = "h100-dra";
    private static final String A100 = ShippedCluster.GPU_NODE;
    private static final String V100 = "v100-dra";
    private static final String CPU = ShippedCluster.CPU_NODE;
    private static final List<String> NODES = List.of(H100, A100, V100, CPU);
    private static final int URGENT = 1000;
    private static final int SWEEP = -100;
    private static final Duration START = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ShippedCluster cluster;
    private final KubernetesClient client;
    private JarProcess extender;
    private String base;

    ShippedExtenderDraTest(ShippedCluster cluster) {
        this.cluster = cluster;
        this.client = cluster.client;
    }

    @BeforeAll
    void startTheJarOnADraCluster() throws Exception {
        // The cluster's GPU node runs no device plugin here: NVIDIA's DRA driver publishes its A100s, and two more nodes' GPUs.
        for (var node : List.of(H100, V100)) {
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).addToLabels("kubernetes.io/hostname", node)
                    .endMetadata().withNewStatus().addToAllocatable(Map.of("cpu", new Quantity("64"), "memory", new Quantity("512Gi"),
                            "pods", new Quantity("110"))).endStatus().build()).create();
        }
        for (var node : Map.of(H100, "dgx-h100", A100, "dgx-a100", V100, "dgx1-v100").entrySet()) {
            try (var gpus = SimulatedGpuSource.open(node.getValue(), node.getKey())) {
                client.resource(NvidiaDraSlice.of(node.getKey(), gpus.topology())).create();
            }
        }
        client.resource(NvidiaDraSlice.gpuClass(HetgpuKeys.DEFAULT_RESOURCE_NAME)).create();
        for (int gpus : new int[] {1, 4}) {
            client.resource(new ResourceClaimTemplateBuilder().withNewMetadata().withName(gpus + "-gpus").withNamespace(NS).endMetadata()
                    .withNewSpec().withNewSpec().withNewDevices().addNewRequest().withName("gpus").withNewExactly()
                    .withDeviceClassName(NvidiaDraSlice.GPU_CLASS).withCount((long) gpus).endExactly().endRequest().endDevices()
                    .endSpec().endSpec().build()).create();
        }
        // A named claim of six V100s, allocated and reserved for a pod running on the V100 node: two V100s stay free.
        var holder = client.pods().resource(pod("holder", SWEEP).withNodeName(V100).withResourceClaims(
                new PodResourceClaimBuilder().withName("gpus").withResourceClaimName("six-v100").build()).endSpec()
                .editStatus().withPhase("Running").endStatus().build()).create();
        var results = IntStream.range(0, 6).mapToObj(i -> new DeviceRequestAllocationResultBuilder().withRequest("gpus")
                .withDriver(NvidiaDraSlice.DRIVER).withPool(V100).withDevice("gpu-" + i).build()).toList();
        client.resource(new ResourceClaimBuilder().withNewMetadata().withName("six-v100").withNamespace(NS).endMetadata()
                .withNewSpec().withNewDevices().addNewRequest().withName("gpus").withNewExactly()
                .withDeviceClassName(NvidiaDraSlice.GPU_CLASS).withCount(6L).endExactly().endRequest().endDevices().endSpec()
                .withNewStatus().withNewAllocation().withNewDevices().withResults(results).endDevices()
                // Node-local devices: kube-scheduler ties the allocation to the node by name.
                .withNodeSelector(new io.fabric8.kubernetes.api.model.NodeSelectorBuilder().addNewNodeSelectorTerm().addNewMatchField()
                        .withKey("metadata.name").withOperator("In").withValues(V100).endMatchField().endNodeSelectorTerm().build())
                .endAllocation()
                .addNewReservedFor().withResource("pods").withName("holder").withUid(holder.getMetadata().getUid()).endReservedFor()
                .endStatus().build()).create();

        var pod = cluster.extenderPod();
        extender = cluster.start(SCHEDULER_EXTENDER, pod, "extender.log");
        base = "http://127.0.0.1:" + pod.flagPort("--port");
        var probes = "http://127.0.0.1:" + pod.port("metrics");
        await("the extender's informers sync").atMost(START).ignoreExceptions()
                .failFast("the extender exited", JarProcess.stillRunning(extender))
                .untilAsserted(() -> assertThat(cluster.get(probes + "/readyz").statusCode()).as(extender::describe).isEqualTo(200));
    }

    @AfterAll
    void stopTheJar() throws Exception {
        if (extender != null) {
            assertThat(extender.stop()).as(extender::describe).isIn(0, 143);
            assertThat(extender.output()).as("the extender's log").doesNotContain("Exception");
        }
    }

    @Test
    void anUrgentClaimPodIsSentToTheNewestCardsAndASweepToTheOldest() throws Exception {
        var urgent = claiming("urgent", URGENT, "1-gpus");
        var filtered = await("the slices reach the extender").atMost(START).ignoreExceptions().until(() -> filter(urgent),
                answer -> names(answer).contains(H100));
        // Faster cards are free: the urgent pod refuses the slower ones (evictForFasterCards), as a device-plugin pod would.
        assertThat(names(filtered)).as(filtered::toString).containsExactly(H100);
        assertThat(filtered.get("FailedNodes").get(V100).asText()).contains("faster cards are free");
        assertThat(filtered.get("FailedAndUnresolvableNodes").get(CPU).asText()).contains("no GPUs");
        assertThat(best(prioritize(urgent, List.of(H100, A100, V100)))).isEqualTo(H100);

        var sweep = claiming("sweep", SWEEP, "1-gpus");
        assertThat(names(filter(sweep))).containsExactlyInAnyOrder(H100, A100, V100);
        assertThat(best(prioritize(sweep, List.of(H100, A100, V100)))).isEqualTo(V100);
    }

    @Test
    void aFourGpuClaimIsRefusedWhereTheAllocatedClaimLeavesTwo() throws Exception {
        var four = claiming("four", SWEEP, "4-gpus");
        var filtered = await("the allocated claim reaches the extender").atMost(START).ignoreExceptions().until(() -> filter(four),
                answer -> answer.path("FailedNodes").has(V100));
        assertThat(filtered.get("FailedNodes").get(V100).asText()).as(filtered::toString).isEqualTo("2 free V100, pod needs 4");
        assertThat(names(filtered)).containsExactlyInAnyOrder(H100, A100);
        // Among the nodes left, a sweep still takes the older cards.
        assertThat(best(prioritize(four, List.of(H100, A100)))).isEqualTo(A100);
    }

    @Test
    void aCpuPodIsScoredToTheCpuNode() throws Exception {
        var serving = client.pods().resource(pod("serving", 0).endSpec().build()).create();
        await("the nodes reach the extender").atMost(START).ignoreExceptions()
                .untilAsserted(() -> assertThat(best(prioritize(serving, NODES))).isEqualTo(CPU));
    }

    @Test
    void aPlainGpuRequestServedByTheDeviceClassIsJudgedAsAGpuPod() throws Exception {
        var plain = client.pods().resource(pod("plain", URGENT).editFirstContainer().editResources()
                .addToLimits(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity("4")).endResources().endContainer().endSpec().build()).create();
        var filtered = await("the slices reach the extender").atMost(START).ignoreExceptions().until(() -> filter(plain),
                answer -> names(answer).contains(H100));
        assertThat(names(filtered)).as(filtered::toString).containsExactly(H100);
        assertThat(filtered.get("FailedNodes").get(A100).asText()).contains("faster cards are free");
        assertThat(filtered.get("FailedAndUnresolvableNodes").get(CPU).asText()).contains("no GPUs");
        assertThat(best(prioritize(plain, List.of(H100, A100, V100)))).isEqualTo(H100);

        // A sweep asking three plain GPUs: two V100s are free, so the V100 node is refused as for a claim.
        var sweep = client.pods().resource(pod("plain-sweep", SWEEP).editFirstContainer().editResources()
                .addToLimits(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity("3")).endResources().endContainer().endSpec().build()).create();
        var swept = filter(sweep);
        assertThat(swept.get("FailedNodes").get(V100).asText()).as(swept::toString).isEqualTo("2 free V100, pod needs 3");
        assertThat(best(prioritize(sweep, List.of(H100, A100)))).isEqualTo(A100);
    }

    /** A pod claiming GPUs through a template, with its claim made as kube-controller-manager makes it. */
    private Pod claiming(String name, int priority, String template) {
        client.pods().resource(pod(name, priority).withResourceClaims(new PodResourceClaimBuilder().withName("gpus")
                .withResourceClaimTemplateName(template).build()).endSpec().build()).create();
        new ResourceClaimController(client).reconcile();
        var made = client.pods().inNamespace(NS).withName(name).get();
        assertThat(made.getStatus().getResourceClaimStatuses()).as("the claim made from " + template).hasSize(1);
        assertThat(client.resources(ResourceClaim.class).inNamespace(NS)
                .withName(made.getStatus().getResourceClaimStatuses().getFirst().getResourceClaimName()).get()).isNotNull();
        return made;
    }

    private static PodBuilder.SpecNested<PodBuilder> pod(String name, int priority) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace(NS).endMetadata()
                .withNewStatus().withPhase("Pending").endStatus()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").withPriority(priority)
                .addNewContainer().withName("main").withImage("train").withNewResources().addToRequests("cpu", new Quantity("2"))
                .endResources().endContainer();
    }

    private JsonNode filter(Pod pod) throws Exception {
        return cluster.post(base + "/filter", body(pod, NODES));
    }

    private JsonNode prioritize(Pod pod, List<String> nodes) throws Exception {
        return cluster.post(base + "/prioritize", body(pod, nodes));
    }

    private static String body(Pod pod, List<String> nodes) throws Exception {
        return "{\"Pod\":" + Serialization.asJson(pod) + ",\"NodeNames\":" + JSON.writeValueAsString(nodes) + "}";
    }

    /** The host prioritize scores highest, which must be the only one with that score. */
    private static String best(JsonNode priorities) {
        var byHost = new LinkedHashMap<String, Integer>();
        priorities.forEach(score -> byHost.put(score.get("Host").asText(), score.get("Score").asInt()));
        int top = byHost.values().stream().mapToInt(Integer::intValue).max().orElseThrow();
        var best = byHost.entrySet().stream().filter(e -> e.getValue() == top).map(Map.Entry::getKey).toList();
        assertThat(best).as("the best of " + byHost).hasSize(1);
        return best.getFirst();
    }

    private static List<String> names(JsonNode answer) {
        var names = answer.get("NodeNames");
        return names == null || names.isNull() ? List.of()
                : JSON.convertValue(names, JSON.getTypeFactory().constructCollectionType(List.class, String.class));
    }
}
