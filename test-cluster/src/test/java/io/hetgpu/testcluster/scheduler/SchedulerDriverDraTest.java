package io.hetgpu.testcluster.scheduler;

import static io.hetgpu.testcluster.scheduler.ClusterObjects.node;
import static io.hetgpu.testcluster.scheduler.ClusterObjects.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.hetgpu.gpu.profile.SimulatedGpuSource;
import io.hetgpu.testcluster.cluster.NvidiaDraSlice;
import io.hetgpu.testcluster.cluster.ResourceClaimController;
import java.net.http.HttpClient;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The scheduler driver with DRA objects in the API server: NVIDIA-shaped slices on two nodes, claims made from templates
 * by the claim controller, allocated at the filter and written before the bind, as kube-scheduler's DynamicResources plugin
 * does.
 */
@EnableKubernetesMockClient(crud = true)
class SchedulerDriverDraTest {

    private static final String H100 = "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')";

    KubernetesClient client;

    @BeforeEach
    void draNodes() throws Exception {
        client.nodes().resource(node("dgx-h100", 0)).create();
        client.nodes().resource(node("dgx-a100", 0)).create();
        for (var n : List.of(List.of("dgx-h100", "dgx-h100"), List.of("dgx-a100", "dgx-a100"))) {
            try (var gpus = SimulatedGpuSource.open(n.get(1), n.get(0))) {
                client.resource(NvidiaDraSlice.of(n.get(0), gpus.topology())).create();
            }
        }
        client.resource(NvidiaDraSlice.gpuClass("nvidia.com/gpu")).create();
    }

    private SchedulerDriver driver() {
        return new SchedulerDriver(client, new SchedulerSettings("hetgpu-scheduler", 100, List.of()), HttpClient.newHttpClient(), 1);
    }

    private void template(String name, int count, String... selectors) {
        var exactly = new io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequestBuilder()
                .withDeviceClassName(NvidiaDraSlice.GPU_CLASS).withCount((long) count);
        for (var selector : selectors) {
            exactly.addNewSelector().withNewCel().withExpression(selector).endCel().endSelector();
        }
        var request = new DeviceRequestBuilder().withName("gpus").withExactly(exactly.build()).build();
        ResourceClaimTemplate template = new ResourceClaimTemplateBuilder().withNewMetadata().withName(name).withNamespace("default").endMetadata()
                .withNewSpec().withNewSpec().withNewDevices().withRequests(request).endDevices().endSpec().endSpec().build();
        client.resource(template).create();
    }

    private Pod claiming(String name, String template) {
        return new PodBuilder(pod(name, 0, 0)).editSpec().withResourceClaims(new PodResourceClaimBuilder().withName("gpus")
                .withResourceClaimTemplateName(template).build()).endSpec().build();
    }

    private ResourceClaim claimOf(String pod) {
        var status = client.pods().inNamespace("default").withName(pod).get().getStatus().getResourceClaimStatuses();
        assertThat(status).hasSize(1);
        return client.resources(ResourceClaim.class).inNamespace("default").withName(status.get(0).getResourceClaimName()).get();
    }

    @Test
    void aPodWithAClaimFromATemplateIsPlacedWhereItsClaimCanBeAllocatedAndTheClaimIsWritten() {
        template("two-h100", 2, H100);
        client.pods().resource(claiming("trainer", "two-h100")).create();

        // Before the controller has made the claim, the pod waits.
        var waiting = driver().scheduleRound();
        assertThat(waiting.get(0)).isInstanceOfSatisfying(Decision.Unschedulable.class,
                u -> assertThat(u.message()).contains("waiting for the resourceclaim of \"gpus\" to be created"));

        assertThat(new ResourceClaimController(client).reconcile()).isEqualTo(1);
        var claim = claimOf("trainer");
        assertThat(claim.getMetadata().getName()).matches("trainer-gpus-[a-z0-9]{5}");
        assertThat(claim.getMetadata().getAnnotations()).containsEntry(ResourceClaimController.POD_CLAIM_NAME_ANNOTATION, "gpus");
        var uid = client.pods().inNamespace("default").withName("trainer").get().getMetadata().getUid();
        assertThat(claim.getMetadata().getOwnerReferences()).extracting(o -> o.getUid()).containsExactly(uid);

        var decisions = driver().scheduleRound();

        assertThat(decisions.get(0)).isInstanceOfSatisfying(Decision.Bound.class, b -> assertThat(b.node()).isEqualTo("dgx-h100"));
        assertThat(client.pods().inNamespace("default").withName("trainer").get().getSpec().getNodeName()).isEqualTo("dgx-h100");
        var allocated = claimOf("trainer");
        assertThat(allocated.getMetadata().getFinalizers()).contains(DraWrites.FINALIZER);
        var results = allocated.getStatus().getAllocation().getDevices().getResults();
        assertThat(results).extracting(r -> r.getRequest() + " " + r.getDriver() + "/" + r.getPool() + "/" + r.getDevice())
                .containsExactly("gpus gpu.nvidia.com/dgx-h100/gpu-0", "gpus gpu.nvidia.com/dgx-h100/gpu-1");
        assertThat(DraObjects.allocatedNode(allocated)).contains("dgx-h100");
        assertThat(allocated.getStatus().getReservedFor()).extracting(r -> r.getResource() + "/" + r.getName() + "/" + r.getUid())
                .containsExactly("pods/trainer/" + uid);
    }

    @Test
    void aPrioritizedListSendsThePodToTheNodeThatServesItsEarliestAlternative() {
        var request = new DeviceRequestBuilder().withName("gpus").withFirstAvailable(
                new io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequestBuilder().withName("h100").withDeviceClassName(NvidiaDraSlice.GPU_CLASS)
                        .withCount(1L).addNewSelector().withNewCel().withExpression(H100).endCel().endSelector().build(),
                new io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequestBuilder().withName("any").withDeviceClassName(NvidiaDraSlice.GPU_CLASS)
                        .withCount(1L).build()).build();
        client.resource(new ResourceClaimTemplateBuilder().withNewMetadata().withName("h100-first").withNamespace("default").endMetadata()
                .withNewSpec().withNewSpec().withNewDevices().withRequests(request).endDevices().endSpec().endSpec().build()).create();
        client.pods().resource(claiming("urgent", "h100-first")).create();
        new ResourceClaimController(client).reconcile();

        var decision = driver().scheduleRound().get(0);

        // Both nodes can serve the claim; the DynamicResources plugin scores the H100 node 8 (first alternative), the A100
        // node 7 (second), scaled to 100 and 87 on top of equal default scores: first fit alone would toss a coin.
        assertThat(decision).isInstanceOfSatisfying(Decision.Bound.class, b -> {
            assertThat(b.node()).isEqualTo("dgx-h100");
            assertThat(b.pluginScores().get("dgx-h100") - b.pluginScores().get("dgx-a100")).isEqualTo(13);
        });
        assertThat(claimOf("urgent").getStatus().getAllocation().getDevices().getResults()).extracting(r -> r.getRequest())
                .containsExactly("gpus/h100");
    }

    @Test
    void devicesAllocatedToOneClaimAreNotGivenToTheNext() {
        template("six-h100", 6, H100);
        for (var name : List.of("first", "second")) {
            client.pods().resource(claiming(name, "six-h100")).create();
        }
        new ResourceClaimController(client).reconcile();

        var decisions = driver().scheduleRound();

        // Eight H100s: the first pod's six leave two, so the second waits (the A100 node has no H100).
        assertThat(decisions.get(0)).isInstanceOf(Decision.Bound.class);
        assertThat(decisions.get(1)).isInstanceOfSatisfying(Decision.Unschedulable.class,
                u -> assertThat(u.message()).startsWith("0/2 nodes are available: ").contains("cannot allocate all claims"));
        assertThat(claimOf("second").getStatus() == null || claimOf("second").getStatus().getAllocation() == null).isTrue();
        // A later round, reading the claims from the API server, agrees.
        assertThat(driver().scheduleRound().get(0)).isInstanceOf(Decision.Unschedulable.class);
    }

    @Test
    void aDeletedPodsClaimIsDeletedAndItsDevicesServeTheNextPod() {
        template("six-h100", 6, H100);
        client.pods().resource(claiming("first", "six-h100")).create();
        new ResourceClaimController(client).reconcile();
        assertThat(driver().scheduleRound().get(0)).isInstanceOf(Decision.Bound.class);
        var firstClaim = claimOf("first").getMetadata().getName();

        client.pods().inNamespace("default").withName("first").delete();
        client.pods().resource(claiming("second", "six-h100")).create();
        new ResourceClaimController(client).reconcile();

        assertThat(client.resources(ResourceClaim.class).inNamespace("default").withName(firstClaim).get()).isNull();
        assertThat(driver().scheduleRound().get(0)).isInstanceOfSatisfying(Decision.Bound.class, b -> assertThat(b.node()).isEqualTo("dgx-h100"));
    }

    @Test
    void aClaimOfItsOwnIsDeallocatedOnceItsPodHasFinished() {
        var claim = new ResourceClaimBuilder().withNewMetadata().withName("mine").withNamespace("default").endMetadata()
                .withNewSpec().withNewDevices().addNewRequest().withName("gpu").withNewExactly().withDeviceClassName(NvidiaDraSlice.GPU_CLASS)
                .endExactly().endRequest().endDevices().endSpec().build();
        client.resource(claim).create();
        client.pods().resource(new PodBuilder(pod("job", 0, 0)).editSpec().withResourceClaims(new PodResourceClaimBuilder().withName("gpu")
                .withResourceClaimName("mine").build()).endSpec().build()).create();
        assertThat(driver().scheduleRound().get(0)).isInstanceOf(Decision.Bound.class);
        var claims = client.resources(ResourceClaim.class).inNamespace("default").withName("mine");
        assertThat(claims.get().getStatus().getAllocation()).isNotNull();

        client.pods().inNamespace("default").withName("job").editStatus(p -> new PodBuilder(p).editStatus().withPhase("Succeeded").endStatus().build());
        new ResourceClaimController(client).reconcile();

        assertThat(claims.get().getStatus() == null || claims.get().getStatus().getAllocation() == null).isTrue();
        assertThat(claims.get().getMetadata().getFinalizers()).isNullOrEmpty();
    }

    @Test
    void aPlainGpuRequestIsServedThroughTheClassThatNamesTheResource() {
        client.pods().resource(pod("plain", 3, 0)).create();

        var decisions = driver().scheduleRound();

        assertThat(decisions.get(0)).isInstanceOf(Decision.Bound.class);
        var pod = client.pods().inNamespace("default").withName("plain").get();
        var status = pod.getStatus().getExtendedResourceClaimStatus();
        assertThat(status.getResourceClaimName()).startsWith("plain-extended-resources-");
        assertThat(status.getRequestMappings()).extracting(m -> m.getContainerName() + " " + m.getResourceName() + " " + m.getRequestName())
                .containsExactly("main nvidia.com/gpu container-0-request-2");
        var claim = client.resources(ResourceClaim.class).inNamespace("default").withName(status.getResourceClaimName()).get();
        assertThat(claim.getMetadata().getAnnotations()).containsEntry("resource.kubernetes.io/extended-resource-claim", "true");
        assertThat(claim.getSpec().getDevices().getRequests()).extracting(r -> r.getName() + " " + r.getExactly().getCount())
                .containsExactly("container-0-request-2 3");
        assertThat(claim.getStatus().getAllocation().getDevices().getResults()).hasSize(3)
                .allSatisfy(r -> assertThat(r.getPool()).isEqualTo(pod.getSpec().getNodeName()));
    }

    @Test
    void aClaimThatNamesAMissingClassOrABadSelectorLeavesThePodPendingWithTheReason() {
        template("broken", 1, "device.attributes['gpu.nvidia.com'].productName ==");
        client.pods().resource(claiming("broken", "broken")).create();
        new ResourceClaimController(client).reconcile();

        var decisions = driver().scheduleRound();

        assertThat(decisions.get(0)).isInstanceOfSatisfying(Decision.Unschedulable.class,
                u -> assertThat(u.message()).contains("selector #0: CEL compile error"));
    }

    @Test
    void anAllocatedClaimKeepsItsPodOnItsNode() {
        var claim = new ResourceClaimBuilder().withNewMetadata().withName("shared").withNamespace("default").endMetadata()
                .withNewSpec().withNewDevices().addNewRequest().withName("gpu").withNewExactly().withDeviceClassName(NvidiaDraSlice.GPU_CLASS)
                .endExactly().endRequest().endDevices().endSpec().build();
        client.resource(claim).create();
        var first = new PodBuilder(pod("first", 0, 0)).editSpec().withResourceClaims(new PodResourceClaimBuilder().withName("gpu")
                .withResourceClaimName("shared").build()).endSpec().build();
        client.pods().resource(first).create();
        var bound = (Decision.Bound) driver().scheduleRound().get(0);

        var second = new PodBuilder(pod("second", 0, 0)).editSpec().withResourceClaims(new PodResourceClaimBuilder().withName("gpu")
                .withResourceClaimName("shared").build()).endSpec().build();
        client.pods().resource(second).create();
        var again = driver().scheduleRound();

        assertThat(again.get(0)).isInstanceOfSatisfying(Decision.Bound.class, b -> assertThat(b.node()).isEqualTo(bound.node()));
    }

    @Test
    void podsSharingAClaimInOneRoundShareItsDevicesOnOneNode() {
        var claim = new ResourceClaimBuilder().withNewMetadata().withName("shared").withNamespace("default").endMetadata()
                .withNewSpec().withNewDevices().addNewRequest().withName("gpu").withNewExactly().withDeviceClassName(NvidiaDraSlice.GPU_CLASS)
                .withCount(8L).endExactly().endRequest().endDevices().endSpec().build();
        client.resource(claim).create();
        for (var name : List.of("reader-a", "reader-b")) {
            client.pods().resource(new PodBuilder(pod(name, 0, 0)).editSpec().withResourceClaims(new PodResourceClaimBuilder().withName("gpu")
                    .withResourceClaimName("shared").build()).endSpec().build()).create();
        }

        var decisions = driver().scheduleRound();

        // Eight GPUs a node: a second allocation of the claim would have to take the other node's eight.
        assertThat(decisions).allSatisfy(d -> assertThat(d).isInstanceOf(Decision.Bound.class));
        assertThat(decisions).extracting(d -> ((Decision.Bound) d).node()).containsOnly(((Decision.Bound) decisions.get(0)).node());
        var shared = client.resources(ResourceClaim.class).inNamespace("default").withName("shared");
        assertThat(shared.get().getStatus().getAllocation().getDevices().getResults()).hasSize(8);
        assertThat(shared.get().getStatus().getReservedFor()).extracting(r -> r.getName()).containsExactly("reader-a", "reader-b");

        // One reader done: the claim stays allocated for the other; both done, it is freed.
        client.pods().inNamespace("default").withName("reader-a").delete();
        new ResourceClaimController(client).reconcile();
        assertThat(shared.get().getStatus().getReservedFor()).extracting(r -> r.getName()).containsExactly("reader-b");
        client.pods().inNamespace("default").withName("reader-b").delete();
        new ResourceClaimController(client).reconcile();
        assertThat(shared.get().getStatus() == null || shared.get().getStatus().getAllocation() == null).isTrue();
    }

    @Test
    void slicesAreStoredAsNvidiasDriverPublishesThem() {
        var slice = client.resources(ResourceSlice.class).withName("dgx-h100-gpu.nvidia.com").get();
        assertThat(slice.getSpec().getDriver()).isEqualTo("gpu.nvidia.com");
        assertThat(slice.getSpec().getPool().getName()).isEqualTo("dgx-h100");
        var gpu = slice.getSpec().getDevices().get(0);
        assertThat(gpu.getName()).isEqualTo("gpu-0");
        assertThat(gpu.getAttributes().get("cudaComputeCapability").getVersion()).isEqualTo("9.0.0");
        assertThat(gpu.getAttributes().get("architecture").getString()).isEqualTo("Hopper");
        assertThat(gpu.getAttributes().get("type").getString()).isEqualTo("gpu");
        assertThat(gpu.getAttributes()).containsKeys("uuid", "productName", "brand", "driverVersion", "cudaDriverVersion",
                "resource.kubernetes.io/pcieRoot", "resource.kubernetes.io/pciBusID");
        assertThat(gpu.getCapacity().get("memory").getValue().getNumericalAmount()).isPositive();
    }
}
