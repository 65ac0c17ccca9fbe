package io.hetgpu.testcluster.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraintBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.NvidiaDraSlice;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.ResourceClaimController;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * DRA pods in the test cluster: two nodes whose GPUs NVIDIA's DRA driver publishes (H100s and A100s), one served by
 * hetgpu's device plugin, one CPU node; the claim controller makes claims from templates, the scheduler driver
 * allocates them as kube-scheduler's DynamicResources plugin does, beside the real extender configured from
 * {@code manifests/}, and the kubelets run the pods.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DraEndToEndTest {

    private static final String NS = "default";
    private static final String H100 = "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')";
    private static final String AT_LEAST_AMPERE = "device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('8.0.0')) >= 0";

    private TestCluster cluster;
    private SchedulerDriver scheduler;
    private ResourceClaimController claims;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        cluster = TestCluster.start(List.of(
                NodeSpec.dra("h100-dra", "rack-a", "zone-1", "dgx-h100"),
                NodeSpec.dra("a100-dra", "rack-a", "zone-1", "dgx-a100"),
                NodeSpec.gpu("v100-hetgpu", "rack-b", "zone-1", "dgx1-v100"),
                NodeSpec.cpu("cpu-1", "rack-b", "zone-1")), dir, message -> { });
        var extender = cluster.startExtender(configuration.extender());
        scheduler = new SchedulerDriver(cluster.client(), configuration.schedulerCalling(extender), HttpClient.newHttpClient(), 1);
        claims = new ResourceClaimController(cluster.client());
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    @BeforeEach
    void noPodsNoClaims() {
        new TrainingPods(cluster.client()).deleteAll();
        // The claim controller frees and deletes the claims the deleted pods held.
        claims.reconcile();
        assertThat(cluster.client().resources(ResourceClaim.class).inNamespace(NS).list().getItems()).isEmpty();
    }

    @Test
    void draNodesPublishSlicesInsteadOfADevicePluginsResource() {
        var node = cluster.client().nodes().withName("h100-dra").get();
        assertThat(node.getStatus().getAllocatable()).doesNotContainKey("nvidia.com/gpu");
        var slice = cluster.client().resources(ResourceSlice.class).withName("h100-dra-gpu.nvidia.com").get();
        assertThat(slice.getSpec().getNodeName()).isEqualTo("h100-dra");
        assertThat(slice.getSpec().getDevices()).hasSize(8);
        assertThat(cluster.client().resources(io.fabric8.kubernetes.api.model.resource.v1.DeviceClass.class)
                .withName(NvidiaDraSlice.GPU_CLASS).get()).isNotNull();
    }

    @Test
    void aClaimForTwoH100sOnOnePcieRootIsAllocatedOnTheH100NodeAndThePodRuns() {
        template("two-h100-one-root", List.of(exactly("gpus", 2, H100)), List.of("resource.kubernetes.io/pcieRoot"));
        submit("trainer", "two-h100-one-root");
        assertThat(claims.reconcile()).isEqualTo(1);

        assertThat(scheduleOne("trainer")).isEqualTo("h100-dra");

        var claim = claimOf("trainer");
        var results = claim.getStatus().getAllocation().getDevices().getResults();
        assertThat(results).hasSize(2).allSatisfy(r -> {
            assertThat(r.getDriver()).isEqualTo("gpu.nvidia.com");
            assertThat(r.getPool()).isEqualTo("h100-dra");
        });
        var slice = cluster.client().resources(ResourceSlice.class).withName("h100-dra-gpu.nvidia.com").get();
        var roots = results.stream().map(r -> slice.getSpec().getDevices().stream().filter(d -> d.getName().equals(r.getDevice())).findFirst()
                .orElseThrow().getAttributes().get("resource.kubernetes.io/pcieRoot").getString()).distinct().toList();
        assertThat(roots).hasSize(1);
        assertThat(claim.getStatus().getReservedFor()).extracting(r -> r.getName()).containsExactly("trainer");
        new TrainingPods(cluster.client()).awaitRunning("trainer");
    }

    @Test
    void firstAvailableFallsBackAndAllocatedDevicesAreNotGivenTwice() {
        // All eight H100s to the first pod; the second prefers H100s but takes two Ampere-or-newer GPUs where it can.
        template("all-h100", List.of(exactly("gpus", 8, H100)), List.of());
        var prioritized = new DeviceRequestBuilder().withName("gpus").withFirstAvailable(
                new DeviceSubRequestBuilder().withName("h100").withDeviceClassName(NvidiaDraSlice.GPU_CLASS).withCount(2L)
                        .addNewSelector().withNewCel().withExpression(H100).endCel().endSelector().build(),
                new DeviceSubRequestBuilder().withName("ampere").withDeviceClassName(NvidiaDraSlice.GPU_CLASS).withCount(2L)
                        .addNewSelector().withNewCel().withExpression(AT_LEAST_AMPERE).endCel().endSelector().build()).build();
        template("h100-else-ampere", List.of(prioritized), List.of());
        submit("big", "all-h100");
        claims.reconcile();
        assertThat(scheduleOne("big")).isEqualTo("h100-dra");

        submit("flexible", "h100-else-ampere");
        claims.reconcile();
        assertThat(scheduleOne("flexible")).isEqualTo("a100-dra");
        assertThat(claimOf("flexible").getStatus().getAllocation().getDevices().getResults())
                .extracting(r -> r.getRequest() + " " + r.getPool()).containsOnly("gpus/ampere a100-dra");
    }

    @Test
    void aClaimNoNodeCanSatisfyLeavesThePodPendingSayingWhyOnEachNode() {
        template("sixteen", List.of(exactly("gpus", 16)), List.of());
        submit("greedy", "sixteen");
        claims.reconcile();

        var decisions = scheduler.scheduleRound();

        assertThat(decisions).singleElement().isInstanceOfSatisfying(Decision.Unschedulable.class, u -> {
            assertThat(u.reasons().get("h100-dra")).startsWith("cannot allocate all claims");
            assertThat(u.reasons().get("a100-dra")).startsWith("cannot allocate all claims");
            assertThat(u.message()).startsWith("0/4 nodes are available: ");
        });
    }

    @Test
    void aPlainGpuRequestOnADraNodeIsServedByTheClassThatNamesTheResource() throws Exception {
        // The class as an admin sets it for KEP-5004; the extender reads the node's GPUs from its slice (no device plugin
        // offers nvidia.com/gpu there), judges the pod as any GPU pod and binds it.
        var classes = cluster.client().resources(io.fabric8.kubernetes.api.model.resource.v1.DeviceClass.class);
        classes.withName(NvidiaDraSlice.GPU_CLASS).edit(c -> {
            c.getSpec().setExtendedResourceName("nvidia.com/gpu");
            return c;
        });
        try {
            new TrainingPods(cluster.client()).submit("plain", 4, 0, Map.of(), Map.of("kubernetes.io/hostname", "a100-dra"));

            var decisions = scheduler.scheduleRound();

            assertThat(decisions).singleElement().isInstanceOfSatisfying(Decision.Bound.class, b -> {
                assertThat(b.node()).isEqualTo("a100-dra");
                assertThat(b.byExtender()).isTrue();
            });
            var pod = new TrainingPods(cluster.client()).awaitRunning("plain");
            var status = pod.getStatus().getExtendedResourceClaimStatus();
            var claim = cluster.client().resources(ResourceClaim.class).inNamespace(NS).withName(status.getResourceClaimName()).get();
            assertThat(claim.getStatus().getAllocation().getDevices().getResults()).hasSize(4)
                    .allSatisfy(r -> assertThat(r.getPool()).isEqualTo("a100-dra"));
        } finally {
            classes.withName(NvidiaDraSlice.GPU_CLASS).edit(c -> {
                c.getSpec().setExtendedResourceName(null);
                return c;
            });
        }
    }

    @Test
    void devicePluginPodsStillGoToTheDevicePluginNode() {
        new TrainingPods(cluster.client()).submit("classic", 2, 0, Map.of());
        assertThat(scheduleOne("classic")).isEqualTo("v100-hetgpu");
        assertThat(TrainingPods.devices(new TrainingPods(cluster.client()).awaitRunning("classic"))).hasSize(2);
    }

    private static DeviceRequest exactly(String name, int count, String... selectors) {
        var exactly = new ExactDeviceRequestBuilder().withDeviceClassName(NvidiaDraSlice.GPU_CLASS).withCount((long) count);
        for (var selector : selectors) {
            exactly.addNewSelector().withNewCel().withExpression(selector).endCel().endSelector();
        }
        return new DeviceRequestBuilder().withName(name).withExactly(exactly.build()).build();
    }

    private void template(String name, List<DeviceRequest> requests, List<String> matchAttributes) {
        var constraints = matchAttributes.stream().map(a -> new DeviceConstraintBuilder().withMatchAttribute(a).build()).toList();
        var template = new ResourceClaimTemplateBuilder().withNewMetadata().withName(name).withNamespace(NS).endMetadata()
                .withNewSpec().withNewSpec().withNewDevices().withRequests(requests).withConstraints(constraints).endDevices()
                .endSpec().endSpec().build();
        cluster.client().resource(template).createOr(existing -> existing.update());
    }

    private void submit(String name, String template) {
        var pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(NS).endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler")
                .addNewContainer().withName("main").withImage("train").endContainer()
                .withResourceClaims(new PodResourceClaimBuilder().withName("gpus").withResourceClaimTemplateName(template).build())
                .endSpec().withNewStatus().withPhase("Pending").endStatus().build();
        cluster.client().pods().resource(pod).create();
    }

    private ResourceClaim claimOf(String pod) {
        var statuses = cluster.client().pods().inNamespace(NS).withName(pod).get().getStatus().getResourceClaimStatuses();
        return cluster.client().resources(ResourceClaim.class).inNamespace(NS).withName(statuses.get(0).getResourceClaimName()).get();
    }

    private String scheduleOne(String pod) {
        var decisions = scheduler.scheduleRound();
        assertThat(decisions).singleElement().isInstanceOf(Decision.Bound.class);
        var bound = (Decision.Bound) decisions.getFirst();
        assertThat(bound.pod()).isEqualTo(NS + "/" + pod);
        return bound.node();
    }
}
