package io.hetgpu.testcluster.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.ResourceClaimController;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * hetgpu's own DRA driver end to end: three machines whose GPUs hetgpu's node agent publishes as {@code gpu.hetgpu.io}
 * (the real slice function), the shipped claim templates, the real extender configured from {@code manifests/} reading
 * those slices and claims, and the scheduler driver allocating the claims as kube-scheduler does. An urgent pod's claim
 * lists the newest band first and gets it, on one NVLink set; a sweep's lists the oldest first and gets that.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HetgpuDraEndToEndTest {

    private static final String NS = "default";

    private TestCluster cluster;
    private SchedulerDriver scheduler;
    private ResourceClaimController claims;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        cluster = TestCluster.start(List.of(
                NodeSpec.dra("v100", "rack-a", "zone-1", "dgx1-v100", NodeSpec.DraDriver.HETGPU),
                NodeSpec.dra("h100", "rack-a", "zone-1", "dgx-h100", NodeSpec.DraDriver.HETGPU),
                NodeSpec.dra("a100", "rack-b", "zone-1", "dgx-a100", NodeSpec.DraDriver.HETGPU),
                NodeSpec.cpu("cpu-1", "rack-b", "zone-1")), dir, message -> { });
        var extender = cluster.startExtender(configuration.extender());
        scheduler = new SchedulerDriver(cluster.client(), configuration.schedulerCalling(extender), HttpClient.newHttpClient(), 1);
        claims = new ResourceClaimController(cluster.client());
        var templates = Files.readString(ProjectFiles.manifests().resolve("components/dra-claim-templates/claim-templates.yaml"));
        for (var document : templates.split("\n---\n")) {
            if (document.contains("kind: ResourceClaimTemplate")) {
                var template = Serialization.unmarshal(document, ResourceClaimTemplate.class);
                template.getMetadata().setNamespace(NS);
                cluster.client().resource(template).create();
            }
        }
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    @BeforeEach
    void noPodsNoClaims() {
        new TrainingPods(cluster.client()).deleteAll();
        claims.reconcile();
        assertThat(cluster.client().resources(ResourceClaim.class).inNamespace(NS).list().getItems()).isEmpty();
    }

    @Test
    void anUrgentPairGetsTheNewestCardsOnOneNvlinkSet() {
        submit("urgent", 1_000_000, "hetgpu-gpus-2-high");
        claims.reconcile();

        assertThat(scheduleOne("urgent")).isEqualTo("h100");

        var results = claimOf("urgent").getStatus().getAllocation().getDevices().getResults();
        assertThat(results).hasSize(2).allSatisfy(result -> {
            assertThat(result.getDriver()).isEqualTo(HetgpuDra.DRIVER);
            assertThat(result.getPool()).isEqualTo("h100");
            assertThat(result.getRequest()).as("the newest band the node has, on one set").isEqualTo("gpus/tier-84-up-nvlink");
        });
        var slice = cluster.client().resources(ResourceSlice.class).withName("h100-" + HetgpuDra.DRIVER).get();
        var sets = results.stream().map(result -> slice.getSpec().getDevices().stream().filter(d -> d.getName().equals(result.getDevice()))
                .findFirst().orElseThrow().getAttributes().get(HetgpuDra.nvlinkSet(2)).getString()).distinct().toList();
        assertThat(sets).as("one NVLink pair").hasSize(1);
        new TrainingPods(cluster.client()).awaitRunning("urgent");
    }

    @Test
    void aSweepGetsTheOldestCards() {
        submit("sweep", -10, "hetgpu-gpus-1-low");
        claims.reconcile();

        assertThat(scheduleOne("sweep")).isEqualTo("v100");

        assertThat(claimOf("sweep").getStatus().getAllocation().getDevices().getResults()).singleElement()
                .satisfies(result -> assertThat(result.getRequest()).isEqualTo("gpus/tier-40-44"));
    }

    private void submit(String name, int priority, String template) {
        var pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(NS).endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").withPriority(priority)
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
