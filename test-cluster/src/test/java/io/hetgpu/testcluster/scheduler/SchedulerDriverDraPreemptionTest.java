package io.hetgpu.testcluster.scheduler;

import static io.hetgpu.testcluster.scheduler.ClusterObjects.node;
import static io.hetgpu.testcluster.scheduler.ClusterObjects.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
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
 * Preemption in a DRA cluster with kube-scheduler's DRAPreemption gate on: the victims' claims release their devices in
 * the dry run, so an urgent pod whose claim cannot be allocated while a low-priority pod's claim holds the GPUs evicts
 * that pod, and once the claim controller has freed the victim's claim, gets its devices. Without the gate (every
 * release through 1.37) it evicts nothing.
 */
@EnableKubernetesMockClient(crud = true)
class SchedulerDriverDraPreemptionTest {

    private static final String H100 = "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')";

    KubernetesClient client;

    @BeforeEach
    void oneH100Node() throws Exception {
        client.nodes().resource(node("dgx-h100", 0)).create();
        try (var gpus = SimulatedGpuSource.open("dgx-h100", "dgx-h100")) {
            client.resource(NvidiaDraSlice.of("dgx-h100", gpus.topology())).create();
        }
        client.resource(NvidiaDraSlice.gpuClass("nvidia.com/gpu")).create();
        for (var count : List.of(2, 8)) {
            var request = new DeviceRequestBuilder().withName("gpus").withExactly(new ExactDeviceRequestBuilder()
                    .withDeviceClassName(NvidiaDraSlice.GPU_CLASS).withCount((long) count)
                    .addNewSelector().withNewCel().withExpression(H100).endCel().endSelector().build()).build();
            client.resource(new ResourceClaimTemplateBuilder().withNewMetadata().withName(count + "-h100").withNamespace("default").endMetadata()
                    .withNewSpec().withNewSpec().withNewDevices().withRequests(request).endDevices().endSpec().endSpec().build()).create();
        }
    }

    /** kube-scheduler with its DRAPreemption gate on (beta from 1.38). */
    private SchedulerDriver driver() {
        return asThrough137().releasingDraClaims();
    }

    /** kube-scheduler as released through 1.37: its DynamicResources plugin has no RemovePod. */
    private SchedulerDriver asThrough137() {
        return new SchedulerDriver(client, new SchedulerSettings("hetgpu-scheduler", 100, List.of()), HttpClient.newHttpClient(), 1)
                .preempting(1, seen -> false);
    }

    private Pod claiming(String name, String template, int priority) {
        return new PodBuilder(pod(name, 0, priority)).editSpec().withResourceClaims(new PodResourceClaimBuilder().withName("gpus")
                .withResourceClaimTemplateName(template).build()).endSpec().build();
    }

    private List<String> devicesOf(String pod) {
        var status = client.pods().inNamespace("default").withName(pod).get().getStatus().getResourceClaimStatuses();
        var claim = client.resources(ResourceClaim.class).inNamespace("default").withName(status.get(0).getResourceClaimName()).get();
        return claim.getStatus().getAllocation().getDevices().getResults().stream().map(r -> r.getPool() + "/" + r.getDevice()).toList();
    }

    @Test
    void anUrgentDraPodPreemptsALowPriorityDraPodAndGetsItsDevices() {
        var claims = new ResourceClaimController(client);
        client.pods().resource(claiming("low", "8-h100", 0)).create();
        claims.reconcile();
        assertThat(driver().scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);
        var held = devicesOf("low");
        assertThat(held).hasSize(8);

        client.pods().resource(claiming("urgent", "2-h100", 1000)).create();
        claims.reconcile();
        // Through 1.37 the dry run counts the low pod's devices held whatever it evicts: no candidate, nobody evicted.
        assertThat(asThrough137().scheduleRound()).singleElement().isInstanceOfSatisfying(Decision.Unschedulable.class,
                u -> assertThat(u.message()).contains("preemption: "));
        assertThat(client.pods().inNamespace("default").withName("low").get()).isNotNull();

        var decisions = driver().scheduleRound();

        assertThat(decisions).singleElement().isInstanceOfSatisfying(Decision.Nominated.class, nominated -> {
            assertThat(nominated.node()).isEqualTo("dgx-h100");
            assertThat(nominated.victims()).containsExactly("default/low");
        });
        assertThat(client.pods().inNamespace("default").withName("low").get()).isNull();

        // The claim controller frees the victim's claim; the next round allocates its devices to the urgent pod.
        claims.reconcile();
        assertThat(driver().scheduleRound()).singleElement().isInstanceOfSatisfying(Decision.Bound.class,
                bound -> assertThat(bound.node()).isEqualTo("dgx-h100"));
        assertThat(devicesOf("urgent")).hasSize(2).allMatch(held::contains);
    }

    @Test
    void aClaimSharedWithAPodOfHigherPriorityIsNotReleasedByEvictingTheLowOne() {
        // Both pods share one claim of all eight GPUs: evicting the low one leaves it reserved for the other, so
        // preemption finds no victims whose eviction frees a device.
        var claims = new ResourceClaimController(client);
        client.pods().resource(claiming("low", "8-h100", 0)).create();
        claims.reconcile();
        assertThat(driver().scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);
        var shared = client.pods().inNamespace("default").withName("low").get().getStatus().getResourceClaimStatuses().get(0).getResourceClaimName();
        client.pods().resource(new PodBuilder(pod("high", 0, 2000)).editSpec().withResourceClaims(new PodResourceClaimBuilder().withName("gpus")
                .withResourceClaimName(shared).build()).endSpec().build()).create();
        assertThat(driver().scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);

        client.pods().resource(claiming("urgent", "2-h100", 1000)).create();
        claims.reconcile();

        assertThat(driver().scheduleRound()).singleElement().isInstanceOfSatisfying(Decision.Unschedulable.class,
                u -> assertThat(u.message()).contains("preemption: "));
        assertThat(client.pods().inNamespace("default").withName("low").get()).isNotNull();
    }
}
