package io.hetgpu.extender;

import static io.hetgpu.extender.TestDra.NVIDIA;
import static io.hetgpu.extender.TestDra.allocated;
import static io.hetgpu.extender.TestDra.claim;
import static io.hetgpu.extender.TestDra.exactly;
import static io.hetgpu.extender.TestDra.nvidiaGpus;
import static io.hetgpu.extender.TestDra.slice;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.APIResourceBuilder;
import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.hetgpu.extender.cluster.DraInformers;
import io.hetgpu.extender.http.ServerOptions;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The extender as it ships, against an API server that serves DRA: a pod asking GPUs through a claim is judged by them. */
class DraExtenderTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theShippedWiringReadsClaimsSlicesAndAllocations() throws Exception {
        var dispatcher = new KubernetesCrudDispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
                if ("GET".equals(request.getMethod()) && request.getPath().split("\\?")[0].equals("/apis/" + DraInformers.GROUP_VERSION)) {
                    var resources = List.of("resourceslices", "resourceclaims", "deviceclasses").stream()
                            .map(plural -> new APIResourceBuilder().withName(plural).withVerbs("list", "watch").build()).toList();
                    return new MockResponse().setResponseCode(200).setBody(Serialization.asJson(new APIResourceListBuilder()
                            .withGroupVersion(DraInformers.GROUP_VERSION).withResources(resources).build()));
                }
                return super.dispatch(request);
            }
        };
        var server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        try (var client = server.createClient()) {
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName("a100").endMetadata().build()).create();
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName("cpu-1").endMetadata().build()).create();
            client.resources(ResourceSlice.class).resource(slice("a100", NVIDIA, 1, 1,
                    nvidiaGpus(8, "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi"))).create();
            client.resources(DeviceClass.class).resource(TestDra.nvidiaClass()).create();
            var running = client.pods().inNamespace("ml").resource(podClaiming("running", "running-gpus").editSpec().withNodeName("a100")
                    .endSpec().build()).create();
            var claims = client.resources(ResourceClaim.class).inNamespace("ml");
            claims.resource(allocated(claim("ml", "running-gpus", exactly("gpus", NVIDIA, 6)), "a100", NVIDIA,
                    running.getMetadata().getUid(), "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5")).create();
            claims.resource(claim("ml", "four-gpus", exactly("gpus", NVIDIA, 4))).create();
            claims.resource(claim("ml", "two-gpus", exactly("gpus", NVIDIA, 2))).create();
            var config = ExtenderConfig.DEFAULTS;
            try (var extender = Extender.start(config, new ServerOptions("127.0.0.1", 0, config.bodyLimitBytes(), null, null), Optional.of(client))) {
                assertThat(extender.synced()).succeedsWithin(Duration.ofSeconds(30));
                var base = "http://127.0.0.1:" + extender.port();

                var four = filter(base, podClaiming("four", "four-gpus").build());
                assertThat(four.get("Error").asText()).isEmpty();
                assertThat(four.get("FailedNodes").get("a100").asText()).isEqualTo("2 free A100, pod needs 4");
                assertThat(four.get("FailedAndUnresolvableNodes").get("cpu-1").asText()).isEqualTo("node has no GPUs, pod needs 4");

                var two = filter(base, podClaiming("two", "two-gpus").build());
                assertThat(two.get("NodeNames")).extracting(JsonNode::asText).containsExactly("a100");
            }
        } finally {
            server.destroy();
        }
    }

    private static PodBuilder podClaiming(String name, String claimName) {
        return new PodBuilder().withNewMetadata().withNamespace("ml").withName(name).withUid("uid-" + name).endMetadata().withNewSpec()
                .addNewResourceClaim().withName("gpus").withResourceClaimName(claimName).endResourceClaim()
                .addNewContainer().withName("main").withImage("trainer").endContainer().endSpec();
    }

    private static JsonNode filter(String base, Pod pod) throws Exception {
        var body = "{\"Pod\": " + Serialization.asJson(pod) + ", \"NodeNames\": [\"a100\", \"cpu-1\"]}";
        var response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base + "/filter")).timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response::body).isEqualTo(200);
        return JSON.readTree(response.body());
    }
}
