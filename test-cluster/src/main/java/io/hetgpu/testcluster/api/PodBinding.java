package io.hetgpu.testcluster.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The {@code pods/binding} subresource as the API server serves it (fabric8's mock has none): a POSTed Binding sets
 * the pod's {@code spec.nodeName}; a pod already bound answers 409 Conflict, a missing one 404 NotFound, each with a
 * {@code Status} body shaped like the API server's.
 */
final class PodBinding {

    /** kube-scheduler's binder (client-go {@code Pods(ns).Bind}) posts here. */
    private static final Pattern SUBRESOURCE = Pattern.compile("/api/v1/namespaces/([^/]+)/pods/([^/?]+)/binding(\\?.*)?");
    /** The older form the API server also serves, naming the pod in the Binding's metadata (fabric8's {@code bindings()}). */
    private static final Pattern COLLECTION = Pattern.compile("/api/v1/namespaces/([^/]+)/bindings(\\?.*)?");
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The pod a request binds, and the Binding as posted (a request body can be read once). */
    record Target(String namespace, String pod, String binding) {
    }

    private PodBinding() {
    }

    static Optional<Target> target(RecordedRequest request) {
        if (!"POST".equals(request.getMethod())) {
            return Optional.empty();
        }
        var subresource = SUBRESOURCE.matcher(request.getPath());
        if (subresource.matches()) {
            return Optional.of(new Target(subresource.group(1), subresource.group(2), request.getUtf8Body()));
        }
        var collection = COLLECTION.matcher(request.getPath());
        if (collection.matches()) {
            var body = request.getUtf8Body();
            String pod;
            try {
                pod = JSON.readTree(body).path("metadata").path("name").asText("");
            } catch (IOException e) {
                pod = "";
            }
            return Optional.of(new Target(collection.group(1), pod, body));
        }
        return Optional.empty();
    }

    static MockResponse bind(KubernetesCrudDispatcher store, Target target) {
        String node;
        try {
            node = JSON.readTree(target.binding()).path("target").path("name").asText("");
        } catch (IOException e) {
            return status(400, "BadRequest", "the body is not a Binding: " + e.getMessage());
        }
        if (node.isEmpty()) {
            return status(400, "BadRequest", "Binding.target.name: Required value");
        }
        var podPath = "/api/v1/namespaces/" + target.namespace() + "/pods/" + target.pod();
        var current = store.handleGet(podPath);
        if (current.code() != 200) {
            return status(404, "NotFound", "pods \"" + target.pod() + "\" not found");
        }
        JsonNode pod;
        try {
            pod = JSON.readTree(current.getBody().readUtf8());
        } catch (IOException e) {
            return status(500, "InternalError", e.getMessage());
        }
        var bound = pod.path("spec").path("nodeName").asText("");
        if (!bound.isEmpty()) {
            return status(409, "Conflict", "Operation cannot be fulfilled on pods/binding \"" + target.pod() + "\": pod "
                    + target.pod() + " is already assigned to node \"" + bound + "\"");
        }
        var patch = new RecordedRequest("HTTP/1.1", HttpMethod.PATCH, podPath,
                Headers.builder().add("Content-Type", "application/merge-patch+json").build(),
                // As the API server's binding does: spec.nodeName, and the PodScheduled condition stamped to the second.
                new Buffer().writeUtf8("{\"spec\":{\"nodeName\":\"" + node + "\"},\"status\":{\"conditions\":[{\"type\":\"PodScheduled\","
                        + "\"status\":\"True\",\"lastTransitionTime\":\"" + java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
                        + "\"}]}}"));
        var patched = store.handlePatch(patch);
        if (patched.code() / 100 != 2) {
            return patched;
        }
        return new MockResponse().setResponseCode(201).setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\",\"code\":201}");
    }

    private static MockResponse status(int code, String reason, String message) {
        var body = JSON.createObjectNode().put("kind", "Status").put("apiVersion", "v1").put("status", "Failure")
                .put("message", message).put("reason", reason).put("code", code);
        body.putObject("metadata");
        return new MockResponse().setResponseCode(code).setBody(body.toString());
    }
}
