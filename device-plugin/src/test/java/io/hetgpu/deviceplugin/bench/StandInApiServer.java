package io.hetgpu.deviceplugin.bench;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * An API server for the benchmark's plugin to publish to: fabric8's mock in CRUD mode, over HTTPS with a
 * self-signed certificate, holding one Node. Loaded only when the benchmark publishes to it, so that the benchmark
 * runs without the mock server's jars (on a GPU machine, say) when told {@code --no-api-server}.
 */
final class StandInApiServer implements AutoCloseable {

    private final KubernetesMockServer server;
    private final MockWebServer web;
    /** Held so that its level stays (java.util.logging keeps loggers only weakly): a line per request drowns the figures. */
    private final Logger requestLog;

    private StandInApiServer(KubernetesMockServer server, MockWebServer web, Logger requestLog) {
        this.server = server;
        this.web = web;
        this.requestLog = requestLog;
    }

    /** A server holding Node {@code nodeName}, started. */
    static StandInApiServer started(String nodeName) {
        var requestLog = Logger.getLogger("io.fabric8.mockwebserver");
        requestLog.setLevel(Level.WARNING);
        var web = new MockWebServer();
        var server = new KubernetesMockServer(new Context(), web, new HashMap<>(), new KubernetesCrudDispatcher(), true);
        server.init(InetAddress.getLoopbackAddress(), 0);
        boolean holdsNode = false;
        try (var client = server.createClient()) {
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName(nodeName).endMetadata().build()).create();
            holdsNode = true;
        } finally {
            if (!holdsNode) {
                // Its threads would otherwise keep the benchmark's JVM alive after the failure is printed.
                server.destroy();
            }
        }
        return new StandInApiServer(server, web, requestLog);
    }

    /** Its address, by the name its certificate carries (CN=localhost), as a pod reaches its API server by name. */
    String url() {
        return "https://localhost:" + server.getPort();
    }

    /** Its self-signed certificate (PEM), for the plugin to check the server against, as a pod checks its cluster's. */
    Path caFile() {
        return Path.of(web.getSelfSignedCertificate().certificatePath());
    }

    /** The hetgpu.io keys the plugin has written on the Node so far, to show that it really published. */
    long hetgpuKeys(String nodeName) {
        try (var client = server.createClient()) {
            var metadata = client.nodes().withName(nodeName).get().getMetadata();
            return Stream.concat(metadata.getLabels().keySet().stream(), metadata.getAnnotations().keySet().stream())
                    .filter(key -> key.startsWith("hetgpu.io/")).count();
        }
    }

    @Override
    public void close() {
        server.destroy();
    }
}
