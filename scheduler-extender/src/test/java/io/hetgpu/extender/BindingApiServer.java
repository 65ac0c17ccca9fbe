package io.hetgpu.extender;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.regex.Pattern;

/**
 * fabric8's CRUD mock API server plus the {@code pods/binding} subresource it lacks, answering as the API server does: a
 * Binding sets {@code spec.nodeName}; a pod already bound, or of another UID than the Binding names, is a 409; a missing
 * pod a 404. (test-cluster's API server has the same; this module cannot depend on test-cluster.) Requests are handled
 * one at a time, as the API server's storage serialises writes to one object.
 */
public final class BindingApiServer implements AutoCloseable {

    private static final Pattern BINDING = Pattern.compile("/api/v1/namespaces/([^/]+)/pods/([^/?]+)/binding(\\?.*)?");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final KubernetesMockServer server;
    private final KubernetesClient client;

    private BindingApiServer(KubernetesMockServer server) {
        this.server = server;
        this.client = server.createClient();
    }

    public static BindingApiServer start() {
        var dispatcher = new KubernetesCrudDispatcher() {
            @Override
            public synchronized MockResponse dispatch(RecordedRequest request) {
                var binding = BINDING.matcher(request.getPath());
                if ("POST".equals(request.getMethod()) && binding.matches()) {
                    return bind(this, binding.group(1), binding.group(2), request.getUtf8Body());
                }
                return super.dispatch(request);
            }
        };
        var server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        return new BindingApiServer(server);
    }

    public KubernetesClient client() {
        return client;
    }

    private static MockResponse bind(KubernetesCrudDispatcher store, String namespace, String name, String body) {
        try {
            var binding = JSON.readTree(body);
            var podPath = "/api/v1/namespaces/" + namespace + "/pods/" + name;
            var current = store.handleGet(podPath);
            if (current.code() != 200) {
                return status(404, "NotFound", "pods \"" + name + "\" not found");
            }
            var pod = JSON.readTree(current.getBody().readUtf8());
            var uid = binding.path("metadata").path("uid").asText("");
            if (!uid.isEmpty() && !uid.equals(pod.path("metadata").path("uid").asText())) {
                return status(409, "Conflict", "Precondition failed: UID in precondition: " + uid);
            }
            var boundTo = pod.path("spec").path("nodeName").asText("");
            if (!boundTo.isEmpty()) {
                return status(409, "Conflict", "pod " + name + " is already assigned to node \"" + boundTo + "\"");
            }
            var node = binding.path("target").path("name").asText("");
            var patch = JSON.createObjectNode();
            patch.putObject("spec").put("nodeName", node);
            var patched = store.handlePatch(new RecordedRequest("HTTP/1.1", HttpMethod.PATCH, podPath,
                    Headers.builder().add("Content-Type", "application/merge-patch+json").build(), new Buffer().writeUtf8(patch.toString())));
            return patched.code() / 100 != 2 ? patched
                    : new MockResponse().setResponseCode(201).setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Success\",\"code\":201}");
        } catch (IOException e) {
            return status(400, "BadRequest", e.getMessage());
        }
    }

    private static MockResponse status(int code, String reason, String message) {
        var body = JSON.createObjectNode().put("kind", "Status").put("apiVersion", "v1").put("status", "Failure")
                .put("message", message).put("reason", reason).put("code", code);
        return new MockResponse().setResponseCode(code).setBody(body.toString());
    }

    @Override
    public void close() {
        client.close();
        server.destroy();
    }
}
