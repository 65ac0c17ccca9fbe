package io.hetgpu.deviceplugin.training;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * An API server for the AOT training run to publish to, over TLS on loopback: it holds one Node, which it returns
 * for a read or a patch, lists no pods and keeps a pod watch (a WebSocket) open with nothing in it. Enough for the plugin to go
 * through every step a pod goes through at start (the TLS handshake and certificate check, the Node read and patch,
 * the pod informer's list and watch), so that the classes of each are in the cache.
 */
final class TrainingApiServer implements AutoCloseable {

    private static final char[] PASSWORD = "aot-training".toCharArray();

    private final HttpsServer server;
    private final Path caFile;
    private final ExecutorService exchanges = Executors.newVirtualThreadPerTaskExecutor();
    private final CountDownLatch closed = new CountDownLatch(1);
    private final String nodeName;

    private TrainingApiServer(HttpsServer server, Path caFile, String nodeName) {
        this.server = server;
        this.caFile = caFile;
        this.nodeName = nodeName;
    }

    /**
     * A server holding Node {@code nodeName}, started with a key and a self-signed certificate for 127.0.0.1 that the
     * runtime's {@code keytool} makes in {@code folder} (RSA 2048, as kubeadm's API servers have).
     */
    static TrainingApiServer started(Path folder, String nodeName) throws IOException, GeneralSecurityException, InterruptedException {
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
        var apiServer = new TrainingApiServer(server, caFile, nodeName);
        server.setExecutor(apiServer.exchanges);
        server.createContext("/", apiServer::answer);
        server.start();
        return apiServer;
    }

    /** Where the plugin reaches it. */
    String url() {
        return "https://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Its certificate (PEM), which the plugin trusts as a pod trusts its cluster's CA. */
    Path caFile() {
        return caFile;
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
            exchange.getRequestBody().readAllBytes();
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            var path = exchange.getRequestURI().getPath();
            var query = exchange.getRequestURI().getQuery();
            if (path.equals("/api/v1/nodes/" + nodeName)) {
                send(exchange, 200, """
                        {"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","resourceVersion":"1","labels":{},"annotations":{}}}"""
                        .formatted(nodeName));
            } else if (path.equals("/api/v1/pods") && query != null && query.contains("watch=true")) {
                watch(exchange);
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
