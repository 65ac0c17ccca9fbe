package io.hetgpu.testcluster.api;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The test cluster's Kubernetes API: fabric8's mock server in CRUD mode on a loopback port. The real
 * components reach it through ordinary fabric8 clients and informers (list, watch, get, patch,
 * create), exactly as in a cluster.
 *
 * <p>What it does not enforce: authentication and RBAC (every request is allowed), admission
 * (no defaulting, no validation, no quota, no PriorityClass resolution into {@code spec.priority}),
 * field immutability, and garbage collection. It adds what fabric8's mock lacks and the bind handshake needs:
 * the {@code pods/binding} subresource ({@link PodBinding}). {@code manifests/} is checked separately for RBAC and shape:
 * {@link #observe} shows each request, so that a test can compare what a component asks for with what
 * its ClusterRole allows.
 */
public final class ApiServer implements AutoCloseable {

    /** One request as it reached the server: HTTP method, path with query, and the client's User-Agent (who asked). */
    public record Request(String method, String path, String userAgent) {
    }

    private final KubernetesMockServer server;
    private final List<Consumer<Request>> observers;

    private ApiServer(KubernetesMockServer server, List<Consumer<Request>> observers) {
        this.server = server;
        this.observers = observers;
    }

    public static ApiServer start() {
        List<Consumer<Request>> observers = new CopyOnWriteArrayList<>();
        var dispatcher = new KubernetesCrudDispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
                if (!observers.isEmpty()) {
                    var seen = new Request(request.getMethod(), request.getPath(), request.getHeader("User-Agent"));
                    observers.forEach(observer -> observer.accept(seen));
                }
                var binding = PodBinding.target(request);
                if (binding.isPresent()) {
                    return PodBinding.bind(this, binding.get());
                }
                return super.dispatch(request);
            }

            @Override
            public MockResponse handleGet(String path) {
                return path.contains("/pods") ? NodeNameSelector.list(path, super::handleGet) : super.handleGet(path);
            }

            @Override
            public MockResponse handleWatch(String path) {
                return super.handleWatch(NodeNameSelector.without(path));
            }
        };
        var server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        return new ApiServer(server, observers);
    }

    /** Calls {@code observer} with every request from now on, on the server's threads, before it is answered. */
    public void observe(Consumer<Request> observer) {
        observers.add(observer);
    }

    /** Where clients connect: {@code http://127.0.0.1:PORT}. */
    public String url() {
        return server.url("/").replaceAll("/$", "");
    }

    /** Client settings for a component of the test cluster (one client per component, as in a cluster). */
    public Config config() {
        return new ConfigBuilder(Config.empty())
                .withMasterUrl(url())
                .withNamespace("default")
                .withTrustCerts(true)
                .withRequestRetryBackoffLimit(0)
                // HTTP/1.1 only: over this plain-HTTP server the JDK client's lists go h2c, and twice in .ci/run an
                // informer received its list's answer and never sent its watch (the extender's node informer, so the
                // extender never synced); watches are HTTP/1.1 anyway.
                .withHttp2Disable(true)
                .build();
    }

    public KubernetesClient newClient() {
        return new KubernetesClientBuilder().withConfig(config()).build();
    }

    /** A kubeconfig file for components started through their command line ({@code --kubeconfig PATH}). */
    public Path writeKubeconfig(Path file) throws IOException {
        Files.writeString(file, """
                apiVersion: v1
                kind: Config
                clusters:
                  - name: test-cluster
                    cluster:
                      server: %s
                contexts:
                  - name: test-cluster
                    context:
                      cluster: test-cluster
                      user: test-cluster
                      namespace: default
                current-context: test-cluster
                users:
                  - name: test-cluster
                    user: {}
                """.formatted(url()));
        return file;
    }

    @Override
    public void close() {
        try {
            server.destroy();
        } catch (IllegalStateException e) {
            // MockWebServer gives up waiting for its connection threads after a few seconds; on a loaded machine an
            // informer's watch may still be winding down. Everything the test asked of the server has been answered.
            System.getLogger(ApiServer.class.getName()).log(System.Logger.Level.DEBUG, "mock API server closed slowly", e);
        }
    }
}
