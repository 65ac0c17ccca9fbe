package io.hetgpu.deviceplugin.training;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * An API server on loopback, over TLS, for the device plugin to start against as it does in a pod: the image build's
 * AOT training run ({@link AotTrainingRun}) and {@code ./hetgpu bench registration} both run the plugin against it. It
 * holds one Node, which it returns for a read and to which it applies JSON merge patches (RFC 7386), lists no pods and
 * keeps a pod watch (a WebSocket) open with nothing in it. Enough for the plugin to go through every step a pod goes
 * through at start (the TLS handshake and certificate check, the Node read and patch, the pod informer's list and
 * watch), so that the classes of each are in the cache, and so that the benchmark measures what a pod holds. For the
 * node agent as a DRA driver it also keeps ResourceSlices: listed (all of them, whatever the selector), created, read
 * and replaced, so that the benchmark measures the DRA mode's start to its slice published; and it answers a read of the
 * ResourceClaims it is given ({@link #holdClaim}), which the driver reads as kubelet asks it to prepare them.
 *
 * <p>The plugin reaches it as a pod reaches its cluster's ({@link #podEnvironment()}): at an IP address, through
 * {@code KUBERNETES_SERVICE_HOST} and {@code KUBERNETES_SERVICE_PORT}, which kubelet sets in every container, and
 * checking its certificate against a CA file.
 */
public final class StandInApiServer implements AutoCloseable {

    private static final char[] PASSWORD = "aot-training".toCharArray();
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpsServer server;
    private final Path caFile;
    private final ExecutorService exchanges = Executors.newVirtualThreadPerTaskExecutor();
    private final CountDownLatch closed = new CountDownLatch(1);
    private final CompletableFuture<Void> nodePublished = new CompletableFuture<>();
    private final CompletableFuture<Void> podWatchOpened = new CompletableFuture<>();
    private final CompletableFuture<Void> slicePublished = new CompletableFuture<>();
    /** ResourceClaims by namespace/name; guarded by this. */
    private final Map<String, ObjectNode> claims = new TreeMap<>();
    /** ResourceSlices by name; guarded by this. */
    private final Map<String, ObjectNode> slices = new TreeMap<>();
    private final String nodeName;
    /** The Node as patched so far; guarded by this. */
    private final ObjectNode node;
    private long resourceVersion = 1;

    private StandInApiServer(HttpsServer server, Path caFile, String nodeName) {
        this.server = server;
        this.caFile = caFile;
        this.nodeName = nodeName;
        this.node = JSON.createObjectNode().put("apiVersion", "v1").put("kind", "Node");
        node.putObject("metadata").put("name", nodeName).put("uid", "stand-in-node-uid").put("resourceVersion", "1");
    }

    /**
     * A server holding Node {@code nodeName}, started with a key and a self-signed certificate for 127.0.0.1 that the
     * runtime's {@code keytool} makes in {@code folder} (RSA 2048, as kubeadm's API servers have).
     */
    public static StandInApiServer started(Path folder, String nodeName) throws IOException, GeneralSecurityException, InterruptedException {
        var keyStore = folder.resolve("api-server.p12");
        var caFile = folder.resolve("ca.crt");
        var password = new String(PASSWORD);
        keytool("-genkeypair", "-alias", "api-server", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=127.0.0.1",
                "-ext", "san=ip:127.0.0.1", "-validity", "2", "-storetype", "PKCS12", "-keystore", keyStore.toString(),
                "-storepass", password, "-keypass", password);
        keytool("-exportcert", "-rfc", "-alias", "api-server", "-keystore", keyStore.toString(), "-storepass", password,
                "-file", caFile.toString());
        var keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(KeyStore.getInstance(keyStore.toFile(), PASSWORD), PASSWORD);
        var tls = SSLContext.getInstance("TLS");
        tls.init(keys.getKeyManagers(), null, null);
        var server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(tls));
        var apiServer = new StandInApiServer(server, caFile, nodeName);
        server.setExecutor(apiServer.exchanges);
        server.createContext("/", apiServer::answer);
        server.start();
        return apiServer;
    }

    /** Where a client reaches it. */
    public String url() {
        return "https://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Its certificate (PEM), which the plugin trusts as a pod trusts its cluster's CA. */
    public Path caFile() {
        return caFile;
    }

    /**
     * What the plugin's environment holds to reach it as a pod reaches its API server: the address kubelet gives every
     * container, and the CA file (in a pod, the service account's {@code ca.crt}, which fabric8 reads by default).
     */
    public Map<String, String> podEnvironment() {
        return Map.of("KUBERNETES_SERVICE_HOST", "127.0.0.1",
                "KUBERNETES_SERVICE_PORT", Integer.toString(server.getAddress().getPort()),
                "KUBERNETES_CERTS_CA_FILE", caFile.toString());
    }

    /** The Node's labels and annotations as patched so far, by key. */
    public synchronized Map<String, String> nodeLabelsAndAnnotations() {
        var keys = new TreeMap<String, String>();
        for (var section : List.of("labels", "annotations")) {
            node.path("metadata").path(section).properties().forEach(entry -> keys.put(entry.getKey(), entry.getValue().asText()));
        }
        return keys;
    }

    /**
     * Completes once a patch has given the Node one of hetgpu's labels or annotations: the plugin has published its
     * inventory, and gone through the TLS handshake, the Node's read and its patch on the way.
     */
    public CompletableFuture<Void> nodePublished() {
        return nodePublished.copy();
    }

    /** Completes once a client has created a ResourceSlice: the DRA driver has published its node's GPUs. */
    public CompletableFuture<Void> slicePublished() {
        return slicePublished.copy();
    }

    /** The ResourceSlices as stored so far (copies), by name. */
    public synchronized List<ObjectNode> slices() {
        return slices.values().stream().map(ObjectNode::deepCopy).toList();
    }

    /** Holds {@code claim} (its metadata's namespace and name say where) for clients to read. */
    public synchronized void holdClaim(ObjectNode claim) {
        claims.put(claim.at("/metadata/namespace").asText() + "/" + claim.at("/metadata/name").asText(), claim.deepCopy());
    }

    /** Completes once a client has opened a pod watch: the plugin's informer has listed the pods and watches them. */
    public CompletableFuture<Void> podWatchOpened() {
        return podWatchOpened.copy();
    }

    private static void keytool(String... arguments) throws IOException, InterruptedException {
        var command = new ArrayList<String>(List.of(Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
        command.addAll(List.of(arguments));
        var keytool = new ProcessBuilder(command).redirectErrorStream(true).start();
        var output = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (keytool.waitFor() != 0) {
            throw new IOException("keytool " + arguments[0] + " failed: " + output);
        }
    }

    private void answer(HttpExchange exchange) throws IOException {
        try (exchange) {
            var body = exchange.getRequestBody().readAllBytes();
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            var path = exchange.getRequestURI().getPath();
            var query = exchange.getRequestURI().getQuery();
            if (path.equals("/api/v1/nodes/" + nodeName)) {
                send(exchange, 200, exchange.getRequestMethod().equals("PATCH") ? patched(body) : nodeJson());
            } else if (path.equals("/api/v1/pods") && query != null && query.contains("watch=true")) {
                watch(exchange);
            } else if (path.startsWith(SLICES)) {
                answerSlices(exchange, path.substring(SLICES.length()), body);
            } else if (path.startsWith(CLAIMS_PREFIX) && exchange.getRequestMethod().equals("GET")) {
                var claim = claim(path.substring(CLAIMS_PREFIX.length()));
                if (claim.isPresent()) {
                    send(exchange, 200, claim.get());
                } else {
                    notFound(exchange);
                }
            } else if (path.equals("/api/v1/pods")) {
                send(exchange, 200, """
                        {"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"1"},"items":[]}""");
            } else {
                System.err.printf("training API server: %s %s answered 404%n", exchange.getRequestMethod(), exchange.getRequestURI());
                send(exchange, 404, """
                        {"apiVersion":"v1","kind":"Status","status":"Failure","reason":"NotFound","code":404}""");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final String SLICES = "/apis/resource.k8s.io/v1/resourceslices";
    private static final String CLAIMS_PREFIX = "/apis/resource.k8s.io/v1/namespaces/";

    /** {@code rest}: {@code NAMESPACE/resourceclaims/NAME}; the claim held there as JSON, if any. */
    private synchronized Optional<String> claim(String rest) throws IOException {
        var parts = rest.split("/", -1);
        if (parts.length != 3 || !parts[1].equals("resourceclaims")) {
            return Optional.empty();
        }
        var claim = claims.get(parts[0] + "/" + parts[2]);
        return claim == null ? Optional.empty() : Optional.of(JSON.writeValueAsString(claim));
    }

    private static void notFound(HttpExchange exchange) throws IOException {
        send(exchange, 404, """
                {"apiVersion":"v1","kind":"Status","status":"Failure","reason":"NotFound","code":404}""");
    }

    /** {@code rest}: empty for the collection, else {@code /NAME}. */
    private synchronized void answerSlices(HttpExchange exchange, String rest, byte[] body) throws IOException {
        var method = exchange.getRequestMethod();
        if (rest.isEmpty() && method.equals("GET")) {
            var list = JSON.createObjectNode().put("apiVersion", "resource.k8s.io/v1").put("kind", "ResourceSliceList");
            list.putObject("metadata").put("resourceVersion", Long.toString(resourceVersion));
            var items = list.putArray("items");
            slices.values().forEach(items::add);
            send(exchange, 200, JSON.writeValueAsString(list));
        } else if (rest.isEmpty() && method.equals("POST")) {
            var slice = (ObjectNode) JSON.readTree(body);
            var metadata = (ObjectNode) slice.get("metadata");
            var name = metadata.path("generateName").asText("slice-") + (slices.size() + 1);
            metadata.put("name", name).put("uid", "stand-in-slice-" + (slices.size() + 1)).put("resourceVersion", Long.toString(++resourceVersion));
            slices.put(name, slice);
            slicePublished.complete(null);
            send(exchange, 201, JSON.writeValueAsString(slice));
        } else if (!rest.isEmpty() && slices.containsKey(rest.substring(1)) && method.equals("GET")) {
            send(exchange, 200, JSON.writeValueAsString(slices.get(rest.substring(1))));
        } else if (!rest.isEmpty() && slices.containsKey(rest.substring(1)) && method.equals("PUT")) {
            var slice = (ObjectNode) JSON.readTree(body);
            ((ObjectNode) slice.get("metadata")).put("resourceVersion", Long.toString(++resourceVersion));
            slices.put(rest.substring(1), slice);
            send(exchange, 200, JSON.writeValueAsString(slice));
        } else {
            send(exchange, 404, """
                    {"apiVersion":"v1","kind":"Status","status":"Failure","reason":"NotFound","code":404}""");
        }
    }

    private synchronized String nodeJson() throws IOException {
        return JSON.writeValueAsString(node);
    }

    private synchronized String patched(byte[] patch) throws IOException {
        mergePatch(node, JSON.readTree(patch));
        ((ObjectNode) node.get("metadata")).put("resourceVersion", Long.toString(++resourceVersion));
        var answer = JSON.writeValueAsString(node);
        if (nodeLabelsAndAnnotations().keySet().stream().anyMatch(key -> key.startsWith(HetgpuKeys.PREFIX))) {
            nodePublished.complete(null);
        }
        return answer;
    }

    /** RFC 7386: a patch's object members replace the target's, recursively; a null removes one. */
    static void mergePatch(ObjectNode target, JsonNode patch) {
        patch.properties().forEach(member -> {
            var value = member.getValue();
            if (value.isNull()) {
                target.remove(member.getKey());
            } else if (value.isObject()) {
                var existing = target.get(member.getKey());
                var into = existing instanceof ObjectNode object ? object : target.putObject(member.getKey());
                mergePatch(into, value);
            } else {
                target.set(member.getKey(), value);
            }
        });
    }

    /**
     * An informer's watch, open and quiet until the run ends. fabric8 watches over a WebSocket, as a pod's client does
     * against a real API server: the upgrade is accepted (the JDK's server sends the 101 and leaves the connection
     * open), so that the client's WebSocket classes are in the cache too.
     */
    private void watch(HttpExchange exchange) throws IOException, InterruptedException {
        var key = exchange.getRequestHeaders().getFirst("Sec-WebSocket-Key");
        if ("websocket".equalsIgnoreCase(exchange.getRequestHeaders().getFirst("Upgrade")) && key != null) {
            exchange.getResponseHeaders().set("Upgrade", "websocket");
            exchange.getResponseHeaders().set("Connection", "Upgrade");
            exchange.getResponseHeaders().set("Sec-WebSocket-Accept", webSocketAccept(key));
            exchange.sendResponseHeaders(101, -1);
        } else {
            exchange.sendResponseHeaders(200, 0);
            exchange.getResponseBody().flush();
        }
        podWatchOpened.complete(null);
        closed.await();
    }

    /** RFC 6455's answer to a WebSocket key. */
    static String webSocketAccept(String key) {
        try {
            var sha1 = MessageDigest.getInstance("SHA-1").digest((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").getBytes(StandardCharsets.US_ASCII));
            return Base64.getEncoder().encodeToString(sha1);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1, which every Java runtime has, is missing", e);
        }
    }

    private static void send(HttpExchange exchange, int status, String json) throws IOException {
        var body = json.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, body.length);
        exchange.getResponseBody().write(body);
    }

    @Override
    public void close() {
        closed.countDown();
        server.stop(0);
        exchanges.shutdownNow();
    }
}
