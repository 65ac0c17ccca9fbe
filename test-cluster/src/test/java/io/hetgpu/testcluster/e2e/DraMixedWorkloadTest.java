package io.hetgpu.testcluster.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.NvidiaDraSlice;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.ResourceClaimController;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.ExtenderClient;
import io.hetgpu.testcluster.scheduler.FilterOutcome;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A mixed workload on a cluster whose GPUs only NVIDIA's DRA driver publishes (H100s, A100s and V100s, no device plugin),
 * beside a CPU node, placed by the test cluster's kube-scheduler with the real extender as the shipped manifests configure
 * it: hetgpu's rules hold for pods that claim their GPUs as for device-plugin pods, and each claim is allocated by the
 * test cluster's allocator on the node the extender chose. Some cases also ask the extender's filter verb directly with
 * every node, since kube-scheduler's own DRA filter sends it only the nodes it can allocate on.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DraMixedWorkloadTest {

    private static final String NS = "default";
    private static final int URGENT = 1000;
    private static final int SWEEP = -100;

    private TestCluster cluster;
    private SchedulerDriver scheduler;
    private ExtenderClient extender;
    private ResourceClaimController claims;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        cluster = TestCluster.start(List.of(
                NodeSpec.dra("h100-dra", "rack-a", "zone-1", "dgx-h100"),
                NodeSpec.dra("a100-dra", "rack-a", "zone-1", "dgx-a100"),
                NodeSpec.dra("v100-dra", "rack-b", "zone-1", "dgx1-v100"),
                NodeSpec.cpu("cpu-1", "rack-b", "zone-1")), dir, message -> { });
        var running = cluster.startExtender(configuration.extender());
        var settings = configuration.schedulerCalling(running);
        scheduler = new SchedulerDriver(cluster.client(), settings, HttpClient.newHttpClient(), 1);
        extender = new ExtenderClient(settings.extenders().getFirst(), HttpClient.newHttpClient());
        claims = new ResourceClaimController(cluster.client());
        template("one-gpu", 1);
        template("four-gpus", 4);
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    @BeforeEach
    void noPodsNoClaims() {
        new TrainingPods(cluster.client()).deleteAll();
        claims.reconcile();
        cluster.client().resources(ResourceClaim.class).inNamespace(NS).delete();
        Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> cluster.client().resources(ResourceClaim.class).inNamespace(NS).list().getItems().isEmpty());
    }

    @Test
    void anUrgentClaimGetsTheNewestCardsASweepTheOldestAndACpuPodTheCpuNode() {
        submit(claimPod("urgent", URGENT).withResourceClaims(fromTemplate("one-gpu")).endSpec().build());
        claims.reconcile();
        assertThat(scheduleOne("urgent")).isEqualTo("h100-dra");
        submit(claimPod("sweep", SWEEP).withResourceClaims(fromTemplate("one-gpu")).endSpec().build());
        claims.reconcile();
        assertThat(scheduleOne("sweep")).isEqualTo("v100-dra");
        submit(claimPod("serving", 0).endSpec().build());
        assertThat(scheduleOne("serving")).isEqualTo("cpu-1");

        assertAllocatedOn("urgent", "h100-dra", 1);
        assertAllocatedOn("sweep", "v100-dra", 1);
        new TrainingPods(cluster.client()).awaitRunning("urgent");
        new TrainingPods(cluster.client()).awaitRunning("sweep");
    }

    @Test
    void aFourGpuClaimGoesOnlyWhereAnAllocatedClaimLeavesFourFree() throws Exception {
        // A named claim of six V100s, allocated for a pod on the V100 node: two V100s stay free.
        cluster.client().resource(new ResourceClaimBuilder().withNewMetadata().withName("six-v100").withNamespace(NS).endMetadata()
                .withNewSpec().withNewDevices().addNewRequest().withName("gpus").withNewExactly()
                .withDeviceClassName(NvidiaDraSlice.GPU_CLASS).withCount(6L).endExactly().endRequest().endDevices().endSpec()
                .build()).create();
        submit(claimPod("holder", SWEEP).withNodeSelector(Map.of("kubernetes.io/hostname", "v100-dra"))
                .withResourceClaims(new PodResourceClaimBuilder().withName("gpus").withResourceClaimName("six-v100").build())
                .endSpec().build());
        assertThat(scheduleOne("holder")).isEqualTo("v100-dra");
        assertThat(cluster.client().resources(ResourceClaim.class).inNamespace(NS).withName("six-v100").get().getStatus()
                .getAllocation().getDevices().getResults()).hasSize(6);

        // A sweep prefers the oldest cards; four of them are no longer free there.
        submit(claimPod("four", SWEEP).withResourceClaims(fromTemplate("four-gpus")).endSpec().build());
        claims.reconcile();
        var four = pod("four");
        Awaitility.await("the extender counts the V100s the named claim holds").atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            var outcome = filter(four);
            assertThat(outcome.feasible()).containsExactlyInAnyOrder("h100-dra", "a100-dra");
            assertThat(outcome.failed().get("v100-dra")).as(outcome::toString).contains("2 free").contains("pod needs 4");
        });
        assertThat(filter(four).failedAndUnresolvable()).containsKey("cpu-1");

        assertThat(scheduleOne("four")).isEqualTo("a100-dra");
        assertAllocatedOn("four", "a100-dra", 4);
    }

    @Test
    void aPlainGpuRequestServedByADeviceClassIsPlacedByTheExtenderAsAGpuPod() throws Exception {
        // The class as an admin sets it for KEP-5004: nvidia.com/gpu on these nodes comes from DRA, not from a device plugin.
        var classes = cluster.client().resources(DeviceClass.class);
        classes.withName(NvidiaDraSlice.GPU_CLASS).edit(c -> {
            c.getSpec().setExtendedResourceName(HetgpuKeys.DEFAULT_RESOURCE_NAME);
            return c;
        });
        try {
            var sweep = plainPod("sweep-plain", SWEEP, 1);
            Awaitility.await("the extender reads the class").atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(filter(sweep).feasible()).containsExactlyInAnyOrder("h100-dra", "a100-dra", "v100-dra"));
            assertThat(filter(sweep).failedAndUnresolvable()).containsKey("cpu-1");
            // An urgent pod refuses cards much slower than the free H100s (evictForFasterCards), as any GPU pod of its priority.
            submit(plainPod("urgent-plain", URGENT, 4));
            var urgent = filter(pod("urgent-plain"));
            assertThat(urgent.feasible()).containsExactly("h100-dra");
            assertThat(urgent.failed().get("a100-dra")).as(urgent::toString).contains("faster cards are free");

            var decision = scheduleOneDecision("urgent-plain");
            assertThat(decision.node()).isEqualTo("h100-dra");
            assertThat(decision.byExtender()).as("bound through the extender's bind verb").isTrue();
            var running = new TrainingPods(cluster.client()).awaitRunning("urgent-plain");
            var claim = cluster.client().resources(ResourceClaim.class).inNamespace(NS)
                    .withName(running.getStatus().getExtendedResourceClaimStatus().getResourceClaimName()).get();
            assertThat(claim.getStatus().getAllocation().getDevices().getResults()).hasSize(4)
                    .allSatisfy(r -> assertThat(r.getPool()).isEqualTo("h100-dra"));

            // The four H100s it holds are counted once (its claim), not twice (its claim and its resources.limits).
            submit(plainPod("second", URGENT, 4));
            var second = pod("second");
            var fifth = plainPod("five", URGENT, 5);
            Awaitility.await("the extender counts the plain pod's claim").atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                var outcome = filter(fifth);
                assertThat(outcome.failed().get("h100-dra")).as(outcome::toString).contains("4 free").contains("pod needs 5");
            });
            assertThat(filter(second).feasible()).contains("h100-dra");

            assertThat(scheduleOne("second")).isEqualTo("h100-dra");
            submit(sweep);
            assertThat(scheduleOne("sweep-plain")).isEqualTo("v100-dra");
        } finally {
            classes.withName(NvidiaDraSlice.GPU_CLASS).edit(c -> {
                c.getSpec().setExtendedResourceName(null);
                return c;
            });
        }
    }

    private FilterOutcome filter(Pod pod) throws Exception {
        return extender.filter(pod, cluster.client().nodes().list().getItems().stream().sorted(
                java.util.Comparator.comparing((Node n) -> n.getMetadata().getName())).toList());
    }

    private Pod pod(String name) {
        return cluster.client().pods().inNamespace(NS).withName(name).get();
    }

    private void assertAllocatedOn(String pod, String node, int devices) {
        var statuses = pod(pod).getStatus().getResourceClaimStatuses();
        var claim = cluster.client().resources(ResourceClaim.class).inNamespace(NS).withName(statuses.getFirst().getResourceClaimName()).get();
        assertThat(claim.getStatus().getAllocation().getDevices().getResults()).hasSize(devices).allSatisfy(r -> {
            assertThat(r.getDriver()).isEqualTo(NvidiaDraSlice.DRIVER);
            assertThat(r.getPool()).isEqualTo(node);
        });
        assertThat(claim.getStatus().getReservedFor()).extracting(r -> r.getName()).containsExactly(pod);
    }

    private void template(String name, int gpus) {
        cluster.client().resource(new ResourceClaimTemplateBuilder().withNewMetadata().withName(name).withNamespace(NS).endMetadata()
                .withNewSpec().withNewSpec().withNewDevices().addNewRequest().withName("gpus").withNewExactly()
                .withDeviceClassName(NvidiaDraSlice.GPU_CLASS).withCount((long) gpus).endExactly().endRequest().endDevices()
                .endSpec().endSpec().build()).create();
    }

    private static io.fabric8.kubernetes.api.model.PodResourceClaim fromTemplate(String template) {
        return new PodResourceClaimBuilder().withName("gpus").withResourceClaimTemplateName(template).build();
    }

    private static PodBuilder.SpecNested<PodBuilder> claimPod(String name, int priority) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace(NS).withUid("uid-" + name).endMetadata()
                .withNewStatus().withPhase("Pending").endStatus()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").withPriority(priority)
                .addNewContainer().withName("main").withImage("train").withNewResources()
                .addToRequests("cpu", new Quantity("2")).endResources().endContainer();
    }

    private static Pod plainPod(String name, int priority, int gpus) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace(NS).withUid("uid-" + name).endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").withPriority(priority)
                .addNewContainer().withName("main").withImage("train").withNewResources()
                .addToLimits(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity(Integer.toString(gpus))).endResources().endContainer()
                .endSpec().withNewStatus().withPhase("Pending").endStatus().build();
    }

    private void submit(Pod pod) {
        cluster.client().pods().resource(pod).create();
    }

    private String scheduleOne(String pod) {
        return scheduleOneDecision(pod).node();
    }

    private Decision.Bound scheduleOneDecision(String pod) {
        var decisions = scheduler.scheduleRound();
        assertThat(decisions).singleElement().isInstanceOf(Decision.Bound.class);
        var bound = (Decision.Bound) decisions.getFirst();
        assertThat(bound.pod()).isEqualTo(NS + "/" + pod);
        return bound;
    }
}
