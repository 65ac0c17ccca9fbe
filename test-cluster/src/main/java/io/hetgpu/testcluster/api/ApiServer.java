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
import java.time.Duration;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The test cluster's Kubernetes API: fabric8's mock server in CRUD mode on a loopback port. The real
 * components reach it through ordinary fabric8 clients and informers (list, watch, get, patch,
 * create), exactly as in a cluster.
 *
 * <p>What it does not enforce: authentication and RBAC (every request is allowed), admission
 * (no defaulting, no validation, no quota, no PriorityClass resolution into {@code spec.priority}),
 * field immutability, and garbage collection. It adds what fabric8's mock lacks and the bind handshake needs:
 * the {@code pods/binding} subresource ({@link PodBinding}), and discovery of {@code resource.k8s.io/v1}, which every
 * current API server serves ({@link ResourceApiDiscovery}). {@code manifests/} is checked separately for RBAC and shape:
 * {@link #observe} shows each request, so that a test can compare what a component asks for with what
 * its ClusterRole allows.
 */
public final class ApiServer implements AutoCloseable {

    /** One request as it reached the server: HTTP method, path with query, and the client's User-Agent (who asked). */
    public record Request(String method, String path, String userAgent) {

        /** A watch: its answer is a stream, which {@link Interference.Slow} would hold back for good. */
        public boolean watch() {
            return path.contains("watch=true") || path.contains("watch=1");
        }
    }

    /** What the server does to one request besides answering it: the faults a test plays. */
    public sealed interface Interference {
        /** Answered as usual. */
        Interference NONE = new Slow(Duration.ZERO);

        /** The request takes effect at once; its answer leaves {@code by} later (a slow or overloaded API server). */
        record Slow(Duration by) implements Interference {
        }

        /** Refused with {@code code} (403 for RBAC not yet in effect, 503 for an API server that is unhealthy); nothing changes. */
        record Refused(int code) implements Interference {
        }
    }

    private final KubernetesMockServer server;
    private final List<Consumer<Request>> observers;
    private final AtomicReference<Function<Request, Interference>> interference;

    private ApiServer(KubernetesMockServer server, List<Consumer<Request>> observers,
                      AtomicReference<Function<Request, Interference>> interference) {
        this.server = server;
        this.observers = observers;
        this.interference = interference;
    }

    public static ApiServer start() {
        return start(0);
    }

    /**
     * An API server on a chosen loopback port: a test can point a component at a port where nothing answers yet,
     * then start the server there (an API server down when the component starts).
     */
    public static ApiServer start(int port) {
        List<Consumer<Request>> observers = new CopyOnWriteArrayList<>();
        var interference = new AtomicReference<Function<Request, Interference>>(request -> Interference.NONE);
        var dispatcher = new KubernetesCrudDispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
                var seen = new Request(request.getMethod(), request.getPath(), request.getHeader("User-Agent"));
                observers.forEach(observer -> observer.accept(seen));
                return switch (interference.get().apply(seen)) {
                    case Interference.Refused refused -> new MockResponse().setResponseCode(refused.code()).setBody(
                            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"refused by the test\",\"code\":"
                                    + refused.code() + "}");
                    case Interference.Slow slow -> {
                        var answer = answer(request);
                        yield slow.by().isZero() ? answer : answer.setBodyDelay(slow.by());
                    }
                };
            }

            private MockResponse answer(RecordedRequest request) {
                var binding = PodBinding.target(request);
                if (binding.isPresent()) {
                    return PodBinding.bind(this, binding.get());
                }
                return super.dispatch(request);
            }

            @Override
            public MockResponse handleGet(String path) {
                var discovery = ResourceApiDiscovery.answer(path);
                if (discovery.isPresent()) {
                    return discovery.get();
                }
                return path.contains("/pods") ? NodeNameSelector.list(path, super::handleGet) : super.handleGet(path);
            }

            @Override
            public MockResponse handleWatch(String path) {
                return WatchStream.writtenApart(super.handleWatch(NodeNameSelector.without(path)));
            }
        };
        var web = new MockWebServer();
        // HTTP/1.1 only, as a plain-HTTP endpoint of a real cluster answers (kubectl proxy, say): offered h2c, the JDK
        // client upgrades its first request, and in .ci/run an informer received its list's answer and never sent its
        // watch, and hetgpu explain (a client made from a kubeconfig) waited for ever on its first list.
        web.setHttp2ClearTextEnabled(false);
        var server = new KubernetesMockServer(new Context(), web, new HashMap<>(), dispatcher, false);
        server.init(InetAddress.getLoopbackAddress(), port);
        return new ApiServer(server, observers, interference);
    }

    /** From now on every request meets {@code faults}' answer for it ({@link Interference#NONE} to answer as usual). */
    public void interfere(Function<Request, Interference> faults) {
        interference.set(faults);
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
