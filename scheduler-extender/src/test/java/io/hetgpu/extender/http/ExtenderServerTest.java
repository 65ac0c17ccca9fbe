package io.hetgpu.extender.http;

import io.hetgpu.extender.RequestOnlyVerbs;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.service.ExtenderService;
import io.hetgpu.extender.service.ExtenderVerbs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.gpu.tier.CardCatalog;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The HTTP front against request bodies shaped as kube-scheduler sends them, with no API server behind it. */
class ExtenderServerTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String POD = KubeJson.text("pod-pytorch-worker.json");
    private static final String DGX = KubeJson.text("node-dgx1-v100.json");
    private static final String CPU = KubeJson.text("node-cpu.json");
    /** A DGX-1 served by NVIDIA's device plugin and labelled by GPU Feature Discovery: no hetgpu annotations. */
    private static final String GFD = KubeJson.text("node-gfd-v100.json");

    private Vertx vertx;
    private ExtenderServer server;
    private WebClient client;

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        server = startServer(new ServerOptions("127.0.0.1", 0, 1024 * 1024, null, null));
        client = WebClient.create(vertx);
    }

    private ExtenderServer startServer(ServerOptions options) {
        var catalog = CardCatalog.defaults();
        var verbs = RequestOnlyVerbs.create();
        return join(ExtenderServer.start(vertx, options, verbs, new ExtenderMetrics()));
    }

    @AfterEach
    void stop() {
        server.close();
        join(vertx.close());
    }

    @Test
    void filterKeepsFittingNodesAsTheyCameAndAnswersInKind() throws Exception {
        var response = post("/filter", "{\"Pod\":" + POD + ",\"Nodes\":{\"metadata\":{},\"items\":[" + DGX + "," + CPU + "]},\"NodeNames\":null}");

        assertThat(response.statusCode()).isEqualTo(200);
        var result = JSON.readTree(response.bodyAsString());
        assertThat(fieldNames(result)).containsExactly("Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error");
        assertThat(result.get("Nodes").get("items")).hasSize(1);
        assertThat(result.get("Nodes").get("items").get(0)).isEqualTo(JSON.readTree(DGX));
        assertThat(result.get("NodeNames").isNull()).isTrue();
        assertThat(result.get("FailedNodes").size()).isZero();
        assertThat(result.get("FailedAndUnresolvableNodes").get("cpu-12").asText()).isEqualTo("node has no GPUs, pod needs 4");
        assertThat(result.get("Error").asText()).isEmpty();
    }

    @Test
    void aGfdOnlyNodeKeepsGpuPodsAndCpuPodsAreKeptOffIt() throws Exception {
        var gpuPod = POD.replace("\"hetgpu.io/interconnect\": \"nvlink\",", "");
        var nodes = ",\"Nodes\":{\"items\":[" + GFD + "," + CPU + "]},\"NodeNames\":null}";

        var filter = JSON.readTree(post("/filter", "{\"Pod\":" + gpuPod + nodes).bodyAsString());
        assertThat(filter.get("Nodes").get("items")).hasSize(1);
        assertThat(filter.get("Nodes").get("items").get(0).get("metadata").get("name").asText()).isEqualTo("gfd-v100-03");
        assertThat(filter.get("FailedAndUnresolvableNodes").get("cpu-12").asText()).isEqualTo("node has no GPUs, pod needs 4");

        var cpuPod = POD.replace("\"nvidia.com/gpu\": \"4\"", "\"example.com/none\": \"0\"");
        var scores = JSON.readTree(post("/prioritize", "{\"Pod\":" + cpuPod + nodes).bodyAsString());
        assertThat(scores.get(0).get("Host").asText()).isEqualTo("gfd-v100-03");
        assertThat(scores.get(0).get("Score").asInt()).isZero();
        assertThat(scores.get(1).get("Host").asText()).isEqualTo("cpu-12");
        assertThat(scores.get(1).get("Score").asInt()).isPositive();
    }

    @Test
    void anNvlinkPodIsRefusedOnAGfdOnlyNodeSayingWhy() throws Exception {
        var filter = JSON.readTree(post("/filter", "{\"Pod\":" + POD + ",\"Nodes\":{\"items\":[" + GFD + "]},\"NodeNames\":null}").bodyAsString());

        assertThat(filter.get("Nodes").get("items")).isEmpty();
        assertThat(filter.get("FailedAndUnresolvableNodes").get("gfd-v100-03").asText())
                .isEqualTo("NVLink unknown: node not served by hetgpu's device plugin (no hetgpu.io/gpu-inventory)");
    }

    @Test
    void filterIsIdempotent() {
        var body = "{\"Pod\":" + POD + ",\"Nodes\":{\"items\":[" + DGX + "," + CPU + "]},\"NodeNames\":null}";
        assertThat(post("/filter", body).bodyAsString()).isEqualTo(post("/filter", body).bodyAsString());
    }

    @Test
    void lowerCaseAndUnknownKeysAreAcceptedAsGoDoes() throws Exception {
        var response = post("/filter", "{\"pod\":" + POD + ",\"apiVersion\":\"v1\",\"nodes\":{\"Items\":[" + CPU + "]}}");
        var result = JSON.readTree(response.bodyAsString());
        assertThat(result.get("Error").asText()).isEmpty();
        // Once per answer, not once per node: the other nodes are in no list, which kube-scheduler reads as refused.
        assertThat(result.get("FailedAndUnresolvableNodes").size()).isEqualTo(1);
        assertThat(result.get("FailedNodes").isEmpty()).isTrue();
    }

    @Test
    void aNullPodIsTheSame400WithAnErrorFromEveryVerb() throws Exception {
        for (var verb : List.of("/filter", "/prioritize", "/preempt")) {
            var response = post(verb, "{\"Pod\":null,\"Nodes\":{\"items\":[" + CPU + "]},\"NodeNames\":null}");
            assertThat(response.statusCode()).as(verb).isEqualTo(400);
            assertThat(response.getHeader("content-type")).as(verb).isEqualTo("application/json");
            assertThat(JSON.readTree(response.bodyAsString()).get("Error").asText()).as(verb).isEqualTo(ExtenderService.NULL_POD);
        }
        // The filter's answer keeps its FilterResult shape, so kube-scheduler reads the Error where it looks for it.
        assertThat(fieldNames(JSON.readTree(post("/filter", "{\"Pod\":null,\"NodeNames\":[\"a\"]}").bodyAsString())))
                .containsExactly("Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error");
    }

    @Test
    void anyContentTypeOrNoneIsReadAsJson() throws Exception {
        var body = "{\"Pod\":" + POD + ",\"Nodes\":{\"items\":[" + CPU + "]},\"NodeNames\":null}";
        var expected = post("/filter", body).bodyAsString();
        for (var type : new String[] {"application/x-www-form-urlencoded", "text/plain", "multipart/form-data", "application/octet-stream", null}) {
            var request = client.post(server.port(), "127.0.0.1", "/filter");
            if (type != null) {
                request.putHeader("Content-Type", type);
            }
            var response = join(request.sendBuffer(Buffer.buffer(body)));
            assertThat(response.statusCode()).as(String.valueOf(type)).isEqualTo(200);
            assertThat(response.getHeader("content-type")).as(String.valueOf(type)).isEqualTo("application/json");
            assertThat(response.bodyAsString()).as(String.valueOf(type)).isEqualTo(expected);
        }
    }

    @Test
    void unknownPathsAndWrongMethodsAreAnsweredInJson() throws Exception {
        var unknown = List.of(get("/nope"), post("/nope", "{}"), get("/filter/extra"));
        for (var response : unknown) {
            assertThat(response.statusCode()).isEqualTo(404);
            assertThat(response.getHeader("content-type")).isEqualTo("application/json");
            assertThat(JSON.readTree(response.bodyAsString()).get("Error").asText()).startsWith("no such path: ").contains("POST /filter");
        }
        var wrongMethod = get("/filter");
        assertThat(wrongMethod.statusCode()).isEqualTo(405);
        assertThat(JSON.readTree(wrongMethod.bodyAsString()).get("Error").asText()).isEqualTo("GET /filter: method not allowed; kube-scheduler POSTs to /filter, /prioritize, /preempt and /bind");
    }

    @Test
    void noNodeListGetsAnError() throws Exception {
        var filter = post("/filter", "{\"Pod\":" + POD + ",\"Nodes\":null,\"NodeNames\":null}");
        assertThat(JSON.readTree(filter.bodyAsString()).get("Error").asText()).isEqualTo(ExtenderService.NO_NODES);
    }

    @Test
    void nodeNamesWithoutAnApiServerGetAClearError() throws Exception {
        var filter = post("/filter", "{\"Pod\":" + POD + ",\"Nodes\":null,\"NodeNames\":[\"dgx-v100-07\"]}");
        var result = JSON.readTree(filter.bodyAsString());
        assertThat(result.get("Error").asText()).contains("nodeCacheCapable: false");
    }

    @Test
    void prioritizeAnswersWithABareArrayOfHostsAndScores() throws Exception {
        var gpuPod = POD.replace("\"hetgpu.io/gpu-models\": \"V100,A100\",", "");
        var response = post("/prioritize", "{\"Pod\":" + gpuPod + ",\"Nodes\":{\"items\":[" + DGX + "," + CPU + "]},\"NodeNames\":null}");
        assertThat(response.statusCode()).isEqualTo(200);
        var result = JSON.readTree(response.bodyAsString());
        assertThat(result.isArray()).isTrue();
        assertThat(fieldNames(result.get(0))).containsExactly("Host", "Score");
        assertThat(result.get(0).get("Host").asText()).isEqualTo("dgx-v100-07");
        assertThat(result.get(1).get("Host").asText()).isEqualTo("cpu-12");
        assertThat(result.get(1).get("Score").asInt()).isZero();
        for (var entry : result) {
            assertThat(entry.get("Score").asInt()).isBetween(0, 10);
        }
    }

    @Test
    void aBadAnnotationRefusesThePodOnceQuotingTheValue() throws Exception {
        var bad = POD.replace("\"hetgpu.io/min-gpu-memory\": \"15Gi\"", "\"hetgpu.io/min-gpu-memory\": \"lots\"");
        var response = post("/filter", "{\"Pod\":" + bad + ",\"Nodes\":{\"items\":[" + DGX + "," + CPU + "]},\"NodeNames\":null}");
        assertThat(response.statusCode()).isEqualTo(200);
        var result = JSON.readTree(response.bodyAsString());
        assertThat(result.get("Nodes").get("items")).isEmpty();
        assertThat(result.get("FailedAndUnresolvableNodes").get("dgx-v100-07").asText())
                .isEqualTo("pod ml-team/resnet-train-worker-1 cannot be placed: hetgpu.io/min-gpu-memory: expected a memory size such as \"32Gi\" or \"16000Mi\", got \"lots\"");
        // Once per answer, not once per node: the other nodes are in no list, which kube-scheduler reads as refused.
        assertThat(result.get("FailedAndUnresolvableNodes").size()).isEqualTo(1);
        assertThat(result.get("FailedNodes").isEmpty()).isTrue();

        var scores = post("/prioritize", "{\"Pod\":" + bad + ",\"Nodes\":{\"items\":[" + DGX + "]},\"NodeNames\":null}");
        assertThat(scores.statusCode()).isEqualTo(200);
    }

    @Test
    void malformedJsonIsA400WithAnError() throws Exception {
        var response = post("/filter", "{\"Pod\":{\"metadata\":");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(response.bodyAsString()).get("Error").asText()).startsWith("request body is not valid ExtenderArgs JSON");
    }

    @Test
    void bodiesAboveTheLimitAreRefusedWith413() {
        var huge = "{\"Pod\":" + POD + ",\"Nodes\":{\"items\":[" + String.join(",", java.util.Collections.nCopies(200, DGX)) + "]}}";
        assertThat(huge.length()).isGreaterThan(1024 * 1024);
        var response = post("/filter", huge);
        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(response.bodyAsString()).contains("\"Error\":\"POST /filter: the body is larger than the extender's body limit\"");
    }

    /**
     * kube-scheduler always sends a Content-Length; a body without one (chunked) is read as it comes, in an array that
     * grows, and refused as soon as its bytes pass the limit.
     */
    @Test
    void aChunkedBodyIsReadWholeAndRefusedOnceItsBytesPassTheLimit() throws Exception {
        var under = "{\"Pod\":" + POD + ",\"Nodes\":{\"items\":[" + String.join(",", java.util.Collections.nCopies(20, DGX)) + "]}}";
        assertThat(under.length()).as("past the first array, under the limit").isBetween(64 * 1024, 1024 * 1024);
        var read = chunked("/filter", under);
        assertThat(read).startsWith("HTTP/1.1 200");
        assertThat(JSON.readTree(read.substring(read.indexOf("\r\n\r\n") + 4)).get("Nodes").get("items")).hasSize(1);

        var over = "{\"Pod\":" + POD + ",\"Nodes\":{\"items\":[" + String.join(",", java.util.Collections.nCopies(200, DGX)) + "]}}";
        assertThat(chunked("/filter", over)).startsWith("HTTP/1.1 413")
                .contains("\"Error\":\"POST /filter: the body is larger than the extender's body limit\"");
    }

    /** Sends {@code body} in 8 KiB chunks with no Content-Length; the answer's head and body as they came. */
    private String chunked(String path, String body) throws java.io.IOException {
        try (var socket = new java.net.Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(10_000);
            var out = socket.getOutputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            var bytes = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            try {
                for (int at = 0; at < bytes.length; at += 8192) {
                    int length = Math.min(8192, bytes.length - at);
                    out.write((Integer.toHexString(length) + "\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                    out.write(bytes, at, length);
                    out.write("\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                }
                out.write("0\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                out.flush();
            } catch (java.io.IOException refusedMidway) {
                // The extender answered 413 and closed before the rest was sent: its answer is still there to read.
            }
            var in = new java.io.DataInputStream(socket.getInputStream());
            var head = new StringBuilder();
            while (!head.toString().endsWith("\r\n\r\n")) {
                head.append((char) in.readUnsignedByte());
            }
            var lengthHeader = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
            assertThat(lengthHeader.find()).as(head.toString()).isTrue();
            var answer = new byte[Integer.parseInt(lengthHeader.group(1))];
            in.readFully(answer);
            return head + new String(answer, java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    @Test
    void healthReadinessAndMetrics() {
        assertThat(get("/healthz").statusCode()).isEqualTo(200);
        assertThat(get("/readyz").statusCode()).isEqualTo(200);
        post("/filter", "{\"Pod\":" + POD + ",\"Nodes\":{\"items\":[" + CPU + "]}}");
        var metrics = get("/metrics").bodyAsString();
        assertThat(metrics).contains("hetgpu_extender_requests_seconds_count{status=\"200\",verb=\"filter\"} 1");
        assertThat(metrics).contains("hetgpu_extender_requests_seconds_bucket");
    }

    @Test
    void servesHttpsWithAPemCertificateAndKey() {
        var certificate = io.vertx.core.net.SelfSignedCertificate.create("localhost");
        var tls = startServer(new ServerOptions("127.0.0.1", 0, 1024 * 1024,
                java.nio.file.Path.of(certificate.certificatePath()), java.nio.file.Path.of(certificate.privateKeyPath())));
        try {
            var https = WebClient.create(vertx, new io.vertx.ext.web.client.WebClientOptions().setSsl(true).setTrustAll(true).setVerifyHost(false));
            var response = join(https.post(tls.port(), "127.0.0.1", "/filter")
                    .sendBuffer(Buffer.buffer("{\"Pod\":" + POD + ",\"Nodes\":{\"items\":[" + CPU + "]}}")));
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.bodyAsString()).contains("\"FailedAndUnresolvableNodes\":{\"cpu-12\"");
        } finally {
            tls.close();
        }
    }

    @Test
    void preemptAnswersWithMetaVictims() throws Exception {
        var response = post("/preempt", "{\"Pod\":" + POD + ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":"
                + "{\"n1\":{\"Pods\":[{\"UID\":\"u1\"}],\"NumPDBViolations\":0}}}");
        assertThat(response.statusCode()).isEqualTo(200);
        // Without an API server the node's GPUs are unknown: the proposal is passed back unchanged.
        assertThat(JSON.readTree(response.bodyAsString())).isEqualTo(JSON.readTree(
                "{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[{\"UID\":\"u1\"}],\"NumPDBViolations\":0}}}"));
    }

    @Test
    void bindWithoutAnApiServerAnswersAnErrorSayingToLeaveBindVerbOut() throws Exception {
        var response = post("/bind", "{\"PodName\":\"train-0\",\"PodNamespace\":\"ml\",\"PodUID\":\"u\",\"Node\":\"dgx-1\"}");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(fieldNames(JSON.readTree(response.bodyAsString()))).containsExactly("Error");
        assertThat(JSON.readTree(response.bodyAsString()).get("Error").asText()).contains("leave bindVerb out");
        var malformed = post("/bind", "[");
        assertThat(malformed.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(malformed.bodyAsString()).get("Error").asText()).startsWith("request body is not valid ExtenderBindingArgs JSON");
    }

    @Test
    void bindsWaitingOnASlowApiServerHoldNoFilterBack() throws Exception {
        // Every API call of a bind hangs until released: a bind is stuck on its first one, reading the pod.
        var release = new java.util.concurrent.CountDownLatch(1);
        var stuck = new java.util.concurrent.atomic.AtomicInteger();
        var hanging = new io.hetgpu.extender.cluster.PodBinder() {
            @Override
            public io.fabric8.kubernetes.api.model.Pod pod(String namespace, String name) throws Refusal {
                stuck.incrementAndGet();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new Refusal(0, "API server gone");
            }

            @Override
            public void annotate(String namespace, String name, String resourceVersion, String key, String value) { }

            @Override
            public void removeAnnotation(String namespace, String name, String key, String value) { }

            @Override
            public void bind(String namespace, String name, String uid, String node) { }
        };
        var catalog = CardCatalog.defaults();
        // The bind verb binds only onto nodes its view holds, and waits at most its budget: a long one here.
        var known = io.hetgpu.extender.cluster.NodeSnapshot.of(
                List.of(new io.hetgpu.extender.model.NodeFacts("dgx-1", "1", java.util.Map.of(), null, null)), java.util.Map.of());
        var verbs = ExtenderVerbs.of(new io.hetgpu.extender.cluster.SnapshotClusterView(() -> known),
                new PodRequestParser("nvidia.com/gpu", catalog),
                new NodeStateFactory(catalog, "topology.hetgpu.io/rack"), new PlacementPolicy(PolicySettings.DEFAULTS),
                (pod, table) -> { }, advice -> { }, hanging, report -> { },
                new io.hetgpu.extender.service.BindVerb.Limits(java.util.Set.of("hetgpu-scheduler"), java.time.Duration.ofSeconds(60)));
        var slow = join(ExtenderServer.start(vertx, new ServerOptions("127.0.0.1", 0, 1024 * 1024, null, null), verbs, new ExtenderMetrics()));
        try {
            // More binds than the verbs have threads (one per core), as many as binds have.
            int binds = Math.min(ExtenderServer.BIND_THREADS, Runtime.getRuntime().availableProcessors() + 1);
            var answers = new java.util.ArrayList<io.vertx.core.Future<HttpResponse<Buffer>>>();
            for (int i = 0; i < binds; i++) {
                answers.add(client.post(slow.port(), "127.0.0.1", "/bind").sendBuffer(Buffer.buffer(
                        "{\"PodName\":\"train-" + i + "\",\"PodNamespace\":\"ml\",\"PodUID\":\"u\",\"Node\":\"dgx-1\"}")));
            }
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> stuck.get() == binds);

            var filter = join(client.post(slow.port(), "127.0.0.1", "/filter").sendBuffer(Buffer.buffer(
                    "{\"Pod\":" + POD + ",\"Nodes\":{\"metadata\":{},\"items\":[" + DGX + "]},\"NodeNames\":null}")));
            assertThat(filter.statusCode()).isEqualTo(200);
            assertThat(JSON.readTree(filter.bodyAsString()).get("Nodes").get("items")).hasSize(1);

            release.countDown();
            for (var answer : answers) {
                assertThat(JSON.readTree(join(answer).bodyAsString()).get("Error").asText()).contains("API server gone");
            }
        } finally {
            release.countDown();
            slow.close();
        }
    }

    private HttpResponse<Buffer> post(String path, String body) {
        return join(client.post(server.port(), "127.0.0.1", path).putHeader("content-type", "application/json")
                .sendBuffer(Buffer.buffer(body)));
    }

    private HttpResponse<Buffer> get(String path) {
        return join(client.get(server.port(), "127.0.0.1", path).send());
    }

    private static List<String> fieldNames(JsonNode node) {
        var names = new java.util.ArrayList<String>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    static <T> T join(io.vertx.core.Future<T> future) {
        return future.toCompletionStage().toCompletableFuture().join();
    }
}
