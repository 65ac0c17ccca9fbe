package io.hetgpu.testcluster.explain;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import io.hetgpu.extender.Extender;
import io.hetgpu.testcluster.api.ApiServer;
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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code hetgpu explain} in a DRA cluster: two nodes whose GPUs NVIDIA's DRA driver publishes (H100s, A100s), pods whose
 * claims are made from templates given with {@code -f}. Explain reads the slices and DeviceClasses, makes the claims as the
 * resourceclaim controller would, and allocates them as kube-scheduler's DynamicResources plugin does; the same objects
 * created in the cluster and placed by the test cluster's scheduler with the real extender land where explain said, on
 * the devices it said.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ExplainDraTest {

    private static final String H100 = "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')";

    private TestCluster cluster;
    private DeployedConfiguration configuration;
    private Path kubeconfig;
    private Path dir;
    private final List<ApiServer.Request> requests = new CopyOnWriteArrayList<>();

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        this.dir = dir;
        cluster = TestCluster.start(List.of(NodeSpec.dra("h100-dra", "rack-a", "zone-1", "dgx-h100"),
                NodeSpec.dra("a100-dra", "rack-a", "zone-1", "dgx-a100")), dir, message -> { });
        configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        kubeconfig = cluster.api().writeKubeconfig(dir.resolve("kubeconfig"));
        cluster.api().observe(request -> {
            if (ExplainCommand.USER_AGENT.equals(request.userAgent())) {
                requests.add(request);
            }
        });
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void draPodsGoWhereExplainSaidOnTheDevicesItSaid() throws Exception {
        var file = write("training.yaml", template("two-h100", 2, H100) + "---\n" + template("one-gpu", 1, null) + "---\n"
                + pod("trainer", "two-h100") + "---\n" + pod("notebook", "one-gpu"));
        requests.clear();

        var explained = Explaining.run("--kubeconfig", kubeconfig.toString(), "-n", "dra", "-o", "json", "-f", file.toString());

        assertThat(explained.code()).as(explained.err()).isZero();
        assertThat(requests).as("explain's requests").anySatisfy(request -> assertThat(request.path()).contains("resourceslices"))
                .allSatisfy(request -> assertThat(request.method()).isEqualTo("GET"));
        var said = new LinkedHashMap<String, List<String>>();
        for (var pod : explained.json().path("pods")) {
            assertThat(pod.path("outcome").asText()).as(pod.toString()).isEqualTo("placed");
            var gpus = new ArrayList<String>();
            pod.path("gpus").forEach(gpu -> gpus.add(gpu.asText()));
            said.put(pod.path("name").asText() + " on " + pod.path("node").asText(), gpus);
        }
        assertThat(explained.pod("trainer").path("node").asText()).isEqualTo("h100-dra");
        assertThat(said.get("trainer on h100-dra")).hasSize(2).allMatch(id -> id.startsWith("gpu.nvidia.com/h100-dra/gpu-"));
        assertThat(explained.pod("trainer").path("cards").asText()).isEqualTo("2x H100");

        // The same objects in the cluster: the claim controller makes the claims, an extender started after it sees them.
        var workloads = Workloads.of(WorkloadFiles.read(List.of(file.toString()), System.in).objects(), "dra");
        workloads.dra().templates().forEach(t -> cluster.client().resource(t).create());
        for (var pod : workloads.pods()) {
            cluster.client().resource(pod.pod()).create();
        }
        new ResourceClaimController(cluster.client()).reconcile();
        Extender extender = cluster.startExtender(configuration.extender());
        try {
            var decisions = new SchedulerDriver(cluster.client(), configuration.schedulerCalling(extender), HttpClient.newHttpClient(),
                    ExplainRun.FIRST_BY_NAME).scheduleRound(decision -> { });
            assertThat(decisions).hasSize(2).allMatch(decision -> decision instanceof Decision.Bound);
        } finally {
            cluster.stopExtender(extender);
        }
        var done = new LinkedHashMap<String, List<String>>();
        for (var name : said.keySet().stream().map(key -> key.substring(0, key.indexOf(' '))).toList()) {
            var pod = cluster.client().pods().inNamespace("dra").withName(name).get();
            done.put(name + " on " + pod.getSpec().getNodeName(), devices(pod));
        }
        assertThat(done).as("where the test cluster put them").isEqualTo(said);
    }

    @Test
    void aDraPodNoNodeCanServeIsPendingWithTheAllocatorsReason() throws Exception {
        var file = write("too-big.yaml", template("nine-h100", 9, H100) + "---\n" + pod("too-big", "nine-h100"));

        var explained = Explaining.run("--kubeconfig", kubeconfig.toString(), "-n", "dra-big", "-o", "json", "-f", file.toString());

        assertThat(explained.code()).as(explained.err()).isZero();
        var pod = explained.pod("too-big");
        assertThat(pod.path("outcome").asText()).isEqualTo("pending");
        assertThat(pod.path("message").asText()).contains("cannot allocate all claims");
    }

    @Test
    void aPodWhoseTemplateIsNowhereWaitsForItsClaim() throws Exception {
        var file = write("no-template.yaml", pod("orphan", "not-there"));

        var explained = Explaining.run("--kubeconfig", kubeconfig.toString(), "-n", "dra-orphan", "-o", "json", "-f", file.toString());

        assertThat(explained.code()).as(explained.err()).isZero();
        var pod = explained.pod("orphan");
        assertThat(pod.path("outcome").asText()).isEqualTo("pending");
        assertThat(pod.path("message").asText()).contains("waiting for the resourceclaim of \"gpus\" to be created");
    }

    @Test
    void aPendingPodOfTheClusterGetsAClaimFromItsTemplateAndNoDeviceAnotherClaimHolds() throws Exception {
        var file = write("pending.yaml", template("four-gpus", 4, null) + "---\n" + pod("waiter", "four-gpus"));
        var workloads = Workloads.of(WorkloadFiles.read(List.of(file.toString()), System.in).objects(), "dra-pending");
        workloads.dra().templates().forEach(t -> cluster.client().resource(t).create());
        workloads.pods().forEach(pod -> cluster.client().resource(pod.pod()).create());
        // Every GPU of the A100 node held by a claim allocated before: the waiter can only have the H100 node's (at least
        // five of which are free whichever test ran before).
        var held = new ResourceClaimBuilder().withNewMetadata().withName("held").withNamespace("dra-pending").endMetadata()
                .withNewSpec().endSpec().build();
        cluster.client().resource(held).create();
        var results = IntStream.range(0, 8).mapToObj(i -> new DeviceRequestAllocationResultBuilder().withRequest("gpus")
                .withDriver("gpu.nvidia.com").withPool("a100-dra").withDevice("gpu-" + i).build()).toList();
        cluster.client().resources(ResourceClaim.class).inNamespace("dra-pending").withName("held").editStatus(claim -> {
            claim.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().withResults(results).endDevices()
                    .endAllocation().build());
            return claim;
        });

        try {
            var explained = Explaining.run("--kubeconfig", kubeconfig.toString(), "-o", "json", "dra-pending/waiter");

            assertThat(explained.code()).as(explained.err()).isZero();
            var waiter = explained.pod("waiter");
            assertThat(waiter.path("outcome").asText()).as(waiter.toString()).isEqualTo("placed");
            assertThat(waiter.path("node").asText()).isEqualTo("h100-dra");
            assertThat(waiter.path("cards").asText()).isEqualTo("4x H100");
            // Explain wrote nothing: the pod still waits for the controller to make its claim.
            var status = cluster.client().pods().inNamespace("dra-pending").withName("waiter").get().getStatus();
            assertThat(status == null ? null : status.getResourceClaimStatuses()).isNullOrEmpty();
        } finally {
            // Left behind, the waiter and the held claim would take every GPU in the other tests' explains.
            cluster.client().pods().inNamespace("dra-pending").delete();
            cluster.client().resources(ResourceClaim.class).inNamespace("dra-pending").delete();
        }
    }

    /** The devices the pod's claims were allocated, as explain names them. */
    private List<String> devices(Pod pod) {
        var devices = new ArrayList<String>();
        for (var status : pod.getStatus().getResourceClaimStatuses()) {
            var claim = cluster.client().resources(ResourceClaim.class).inNamespace("dra").withName(status.getResourceClaimName()).get();
            claim.getStatus().getAllocation().getDevices().getResults()
                    .forEach(r -> devices.add(r.getDriver() + "/" + r.getPool() + "/" + r.getDevice()));
        }
        return devices;
    }

    private Path write(String name, String text) throws Exception {
        var file = dir.resolve(name);
        Files.writeString(file, text);
        return file;
    }

    private static String template(String name, int count, String selector) {
        return """
                apiVersion: resource.k8s.io/v1
                kind: ResourceClaimTemplate
                metadata:
                  name: %s
                spec:
                  spec:
                    devices:
                      requests:
                      - name: gpus
                        exactly:
                          deviceClassName: gpu.nvidia.com
                          count: %d
                """.formatted(name, count) + (selector == null ? "" : """
                          selectors:
                          - cel:
                              expression: "%s"
                """.formatted(selector));
    }

    private static String pod(String name, String template) {
        return """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: %s
                spec:
                  schedulerName: hetgpu-scheduler
                  resourceClaims:
                  - name: gpus
                    resourceClaimTemplateName: %s
                  containers:
                  - name: main
                    image: trainer
                    resources:
                      claims:
                      - name: gpus
                """.formatted(name, template);
    }
}
