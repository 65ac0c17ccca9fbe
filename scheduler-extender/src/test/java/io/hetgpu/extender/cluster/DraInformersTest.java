package io.hetgpu.extender.cluster;

import static io.hetgpu.extender.TestDra.NVIDIA;
import static io.hetgpu.extender.TestDra.allocated;
import static io.hetgpu.extender.TestDra.claim;
import static io.hetgpu.extender.TestDra.exactly;
import static io.hetgpu.extender.TestDra.nvidiaGpus;
import static io.hetgpu.extender.TestDra.slice;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.APIResourceBuilder;
import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.hetgpu.extender.TestDra;
import io.hetgpu.extender.TestTrust;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.NodeSlices;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.gpu.tier.CardCatalog;
import java.net.InetAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The view follows DRA's objects only where API discovery says the cluster serves {@code resource.k8s.io/v1}, and works
 * without them where it does not: a fake API server whose discovery a test turns on or off.
 */
class DraInformersTest {

    private static final Duration PATIENCE = Duration.ofSeconds(20);
    private final AtomicBoolean serves = new AtomicBoolean();
    private final Queue<String> paths = new ConcurrentLinkedQueue<>();
    private KubernetesMockServer server;
    private KubernetesClient client;
    private InformerClusterView view;

    @BeforeEach
    void startTheApiServer() {
        var dispatcher = new KubernetesCrudDispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
                var path = request.getPath().split("\\?")[0];
                paths.add(request.getMethod() + " " + path);
                if ("GET".equals(request.getMethod()) && path.equals("/apis/" + DraInformers.GROUP_VERSION)) {
                    return serves.get() ? discovery() : new MockResponse().setResponseCode(404).setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                            + "\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}");
                }
                return super.dispatch(request);
            }
        };
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        client = server.createClient();
        client.getConfiguration().setWatchReconnectInterval(100);
        for (var name : List.of("a100", "cpu-1")) {
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
        }
    }

    private static MockResponse discovery() {
        var resources = List.of("resourceslices", "resourceclaims", "deviceclasses").stream()
                .map(plural -> new APIResourceBuilder().withName(plural).withNamespaced(plural.equals("resourceclaims"))
                        .withVerbs("list", "watch").build()).toList();
        return new MockResponse().setResponseCode(200).setBody(Serialization.asJson(new APIResourceListBuilder()
                .withGroupVersion(DraInformers.GROUP_VERSION).withResources(resources).build()));
    }

    @AfterEach
    void stop() {
        if (view != null) {
            view.close();
        }
        client.close();
        try {
            server.destroy();
        } catch (IllegalStateException e) {
            // fabric8's mock server (7.8.0) can block its own event loop for a while when a watch closes just as it opened
            // (WatchEventsListener.onClosed waits for its send executor there), and then gives up shutting down after 10 s.
            // That is the mock's teardown, after this test's assertions held; the next test starts its own server.
            if (!String.valueOf(e.getMessage()).contains("Unable to close MockWebServer")) {
                throw e;
            }
            System.err.println("mock API server not closed cleanly: " + e.getMessage());
        }
    }

    @Test
    void withoutTheApiTheViewSyncsAndFollowsNothingOfDra() {
        view = view();
        view.start().join();

        assertThat(view.synced()).isTrue();
        assertThat(view.node("a100").slices()).isEqualTo(NodeSlices.NONE);
        assertThat(view.dra().claim("ml", "anything")).isNull();
        assertThat(paths).as("nothing of resource.k8s.io listed or watched").noneMatch(path -> path.startsWith("GET /apis/resource.k8s.io/v1/"));
    }

    @Test
    void withTheApiANodesSlicesAndItsAllocatedClaimsAreFollowed() {
        serves.set(true);
        client.resources(ResourceSlice.class).resource(slice("a100", NVIDIA, 1, 1,
                nvidiaGpus(8, "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi"))).create();
        client.resources(DeviceClass.class).resource(TestDra.nvidiaClass()).create();
        var pod = client.pods().inNamespace("ml").resource(new PodBuilder().withNewMetadata().withNamespace("ml").withName("train").withUid("uid-train")
                .endMetadata().withNewSpec().withNodeName("a100").withPriority(5).addNewResourceClaim().withName("gpus")
                .withResourceClaimName("train-gpus").endResourceClaim().addNewContainer().withName("main").withImage("t").endContainer()
                .endSpec().build()).create();
        client.resources(ResourceClaim.class).inNamespace("ml").resource(allocated(claim("ml", "train-gpus", exactly("gpus", NVIDIA, 2)),
                "a100", NVIDIA, pod.getMetadata().getUid(), "gpu-0", "gpu-1")).create();
        view = view();
        view.start().join();

        assertThat(view.synced()).isTrue();
        assertThat(view.node("a100").slices().gpus()).hasSize(8);
        assertThat(view.dra().deviceClass(NVIDIA)).isNotNull();
        assertThat(view.boundPods("a100")).singleElement().satisfies(holding -> {
            assertThat(holding.uid()).isEqualTo(pod.getMetadata().getUid());
            assertThat(holding.priority()).as("the pod's, read through the claim's reservation").isEqualTo(5);
            assertThat(holding.devices()).containsExactly("gpu.nvidia.com/a100/gpu-0", "gpu.nvidia.com/a100/gpu-1");
        });

        // The driver publishes a new generation with fewer GPUs; the claim is deallocated.
        client.resources(ResourceSlice.class).resource(slice("a100", NVIDIA, 2, 1,
                nvidiaGpus(4, "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi"))).create();
        client.resources(ResourceClaim.class).inNamespace("ml").withName("train-gpus").delete();
        await("the new generation read").atMost(PATIENCE).until(() -> view.node("a100").slices().gpus().size() == 4);
        await("the claim's devices free").atMost(PATIENCE).until(() -> view.boundPods("a100").stream().noneMatch(BoundPod::assigned));
    }

    @Test
    void aClaimAllocatedByPoolAloneIsCountedOnceTheSliceNamingItsNodeArrives() {
        serves.set(true);
        client.resources(DeviceClass.class).resource(TestDra.nvidiaClass()).create();
        // An allocation with no node selector: its node is known only through the slice that publishes its pool.
        var claim = allocated(claim("ml", "pooled", exactly("gpus", NVIDIA, 2)), "a100", NVIDIA, null, "gpu-0", "gpu-1");
        claim.getStatus().getAllocation().setNodeSelector(null);
        client.resources(ResourceClaim.class).inNamespace("ml").resource(claim).create();
        view = view();
        view.start().join();
        assertThat(view.boundPods("a100")).as("no slice yet names the pool's node").isEmpty();

        client.resources(ResourceSlice.class).resource(slice("a100", NVIDIA, 1, 1,
                nvidiaGpus(8, "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi"))).create();

        await("the claim's devices held once its pool is known").atMost(PATIENCE).untilAsserted(() ->
                assertThat(view.boundPods("a100")).singleElement().satisfies(holding ->
                        assertThat(holding.devices()).containsExactly("gpu.nvidia.com/a100/gpu-0", "gpu.nvidia.com/a100/gpu-1")));
        assertThat(view.boundPods("cpu-1")).isEmpty();
    }

    private InformerClusterView view() {
        return new InformerClusterView(client, new PodRequestParser("nvidia.com/gpu", CardCatalog.defaults()), "rack", TestTrust.trust());
    }
}
