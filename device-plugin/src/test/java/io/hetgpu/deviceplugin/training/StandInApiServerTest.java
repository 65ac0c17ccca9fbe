package io.hetgpu.deviceplugin.training;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * The stand-in API server answers what the plugin asks at start, over TLS with a certificate fabric8's client checks
 * against the CA file, as a pod's does; otherwise the image build's training run would not load what a pod loads, nor
 * would the registration benchmark measure what a pod holds.
 */
class StandInApiServerTest {

    @TempDir
    Path folder;

    private StandInApiServer apiServer;
    private KubernetesClient client;

    @BeforeEach
    void start() throws Exception {
        apiServer = StandInApiServer.started(folder, "aot-training");
        client = new KubernetesClientBuilder().withConfig(new ConfigBuilder().withMasterUrl(apiServer.url())
                .withCaCertFile(apiServer.caFile().toString()).withRequestRetryBackoffLimit(0).build()).build();
    }

    @AfterEach
    void stop() {
        client.close();
        apiServer.close();
    }

    /** What the DRA driver's slice writer asks: a list, a create by generateName, a read back, a replacement. */
    @Test
    void keepsTheResourceSlicesADraDriverWrites() {
        assertThat(apiServer.slicePublished()).isNotDone();
        var created = client.resource(new ResourceSliceBuilder().withNewMetadata().withGenerateName("aot-training-gpu.hetgpu.io-")
                .endMetadata().withNewSpec().withDriver("gpu.hetgpu.io").withNodeName("aot-training").withNewPool().withName("aot-training")
                .withGeneration(1L).withResourceSliceCount(1L).endPool().endSpec().build()).create();
        assertThat(created.getMetadata().getName()).startsWith("aot-training-gpu.hetgpu.io-");
        assertThat(apiServer.slicePublished()).isDone();
        var slices = client.resources(ResourceSlice.class);
        assertThat(slices.withField("spec.nodeName", "aot-training").list().getItems()).extracting(s -> s.getMetadata().getName())
                .containsExactly(created.getMetadata().getName());
        created.getSpec().getPool().setGeneration(2L);
        var updated = client.resource(created).update();
        assertThat(updated.getMetadata().getResourceVersion()).isNotEqualTo(created.getMetadata().getResourceVersion());
        assertThat(slices.withName(created.getMetadata().getName()).get().getSpec().getPool().getGeneration()).isEqualTo(2L);
        assertThat(apiServer.slices()).singleElement().satisfies(stored ->
                assertThat(stored.at("/spec/pool/generation").asLong()).isEqualTo(2L));
        assertThat(slices.withName("another").get()).isNull();
    }

    /**
     * The claim the DRA driver's training run prepares, read as the driver reads one (fabric8's v1 model): allocated on
     * this node's pool, on two of hetgpu's devices; a claim it does not hold is not found.
     */
    @Test
    void servesTheClaimsItHoldsToRead() {
        var claim = TrainingClaim.of("aot-training");
        apiServer.holdClaim(claim.json());

        var read = client.resources(ResourceClaim.class).inNamespace(claim.namespace()).withName(claim.name()).get();
        assertThat(read.getMetadata().getUid()).isEqualTo(claim.uid());
        assertThat(read.getStatus().getAllocation().getDevices().getResults()).extracting("driver", "pool", "device")
                .containsExactly(tuple("gpu.hetgpu.io", "aot-training", "gpu-0"), tuple("gpu.hetgpu.io", "aot-training", "gpu-1"));
        assertThat(read.getSpec().getDevices().getConstraints().getFirst().getMatchAttribute()).isEqualTo("gpu.hetgpu.io/nvlinkSet2");
        assertThat(read.getSpec().getDevices().getRequests().getFirst().getFirstAvailable().getFirst().getSelectors().getFirst()
                .getCel().getExpression()).isEqualTo("device.attributes[\"gpu.hetgpu.io\"].tier >= 84");
        assertThat(client.resources(ResourceClaim.class).inNamespace(claim.namespace()).withName("other").get()).isNull();
        assertThat(client.resources(ResourceClaim.class).inNamespace("other").withName(claim.name()).get()).isNull();
    }

    @Test
    void servesTheNodeToReadAndPatchOverACheckedCertificate() {
        assertThat(client.nodes().withName("aot-training").get().getMetadata().getName()).isEqualTo("aot-training");
        var patched = client.nodes().withName("aot-training").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"labels\":{\"hetgpu.io/gpu.model\":\"V100\"}}}");
        assertThat(patched.getMetadata().getName()).isEqualTo("aot-training");
        assertThat(patched.getMetadata().getLabels()).containsEntry("hetgpu.io/gpu.model", "V100");
    }

    @Test
    void appliesMergePatchesAsRfc7386SaysAndKeepsTheResult() {
        var node = client.nodes().withName("aot-training");
        var first = node.patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"},\"annotations\":{\"hetgpu.io/topology\":\"x\"}}}");
        var second = node.patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"labels\":{\"a\":null,\"b\":\"3\"}}}");

        assertThat(second.getMetadata().getLabels()).containsExactlyEntriesOf(Map.of("b", "3"));
        assertThat(second.getMetadata().getAnnotations()).containsEntry("hetgpu.io/topology", "x");
        assertThat(Long.parseLong(second.getMetadata().getResourceVersion()))
                .isGreaterThan(Long.parseLong(first.getMetadata().getResourceVersion()));
        assertThat(node.get().getMetadata().getLabels()).containsExactlyEntriesOf(Map.of("b", "3"));
        assertThat(apiServer.nodeLabelsAndAnnotations()).containsExactlyInAnyOrderEntriesOf(Map.of("b", "3", "hetgpu.io/topology", "x"));
    }

    /** The training run stops the plugin once this completes, so it must mean the inventory is on the Node. */
    @Test
    void tellsTheNodePublishedOnlyOnceAPatchGivesItOneOfHetgpusKeys() {
        var published = apiServer.nodePublished();
        var node = client.nodes().withName("aot-training");
        node.get();
        node.patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"labels\":{\"kubernetes.io/hostname\":\"aot-training\"}}}");
        assertThat(published).as("a read, and a patch of someone else's label").isNotDone();

        node.patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"annotations\":{\"hetgpu.io/gpu-inventory\":\"{}\"}}}");

        assertThat(published).isCompleted();
        assertThat(apiServer.nodePublished()).as("and so it stays").isCompleted();
    }

    @Test
    void tellsAPodsEnvironmentTheAddressKubeletWouldAndTheCa() {
        var environment = apiServer.podEnvironment();
        assertThat(apiServer.url()).isEqualTo("https://" + environment.get("KUBERNETES_SERVICE_HOST") + ":" + environment.get("KUBERNETES_SERVICE_PORT"));
        assertThat(environment.get("KUBERNETES_SERVICE_HOST")).as("an IP address, as kubelet gives every container").matches("[0-9.]+");
        assertThat(environment).containsEntry("KUBERNETES_CERTS_CA_FILE", apiServer.caFile().toString());
    }

    @Test
    void listsNoPodsAndAnswersOtherPathsNotFound() {
        assertThat(client.pods().inAnyNamespace().withField("spec.nodeName", "aot-training").list().getItems()).isEmpty();
        assertThat(client.nodes().withName("another-node").get()).isNull();
    }

    @Test
    void keepsAPodWatchOpenOverAWebSocket() {
        var opened = apiServer.podWatchOpened();
        assertThat(opened).isNotDone();
        var closed = new AtomicReference<WatcherException>();
        try (var watch = client.pods().inAnyNamespace().withField("spec.nodeName", "aot-training").watch(new Watcher<>() {
            @Override
            public void eventReceived(Action action, Pod pod) {
            }

            @Override
            public void onClose(WatcherException cause) {
                closed.set(cause);
            }
        })) {
            assertThat(watch).isNotNull();
            assertThat(closed.get()).as("the watch failed instead of opening").isNull();
            await().atMost(Duration.ofSeconds(30)).until(opened::isDone);
        }
    }

    @Test
    void answersAWebSocketKeyAsRfc6455Says() {
        // The RFC's own example.
        assertThat(StandInApiServer.webSocketAccept("dGhlIHNhbXBsZSBub25jZQ==")).isEqualTo("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    }

    @Test
    void aClientThatDoesNotTrustItsCertificateIsRefused() {
        try (var untrusting = new KubernetesClientBuilder().withConfig(new ConfigBuilder().withMasterUrl(apiServer.url())
                .withRequestRetryBackoffLimit(0).build()).build()) {
            assertThatThrownBy(() -> untrusting.nodes().withName("aot-training").get()).isInstanceOf(KubernetesClientException.class);
        }
    }
}
