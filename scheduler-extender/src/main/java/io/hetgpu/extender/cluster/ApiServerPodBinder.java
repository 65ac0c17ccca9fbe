package io.hetgpu.extender.cluster;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** {@link PodBinder} over fabric8: RBAC needs pods get and patch, and pods/binding create. */
public final class ApiServerPodBinder implements PodBinder {

    /** Longer than one API server round trip ever should take, shorter than kube-scheduler's extender httpTimeout. */
    private static final long BIND_TIMEOUT_SECONDS = 10;

    private final KubernetesClient client;
    private final ObjectMapper json = new ObjectMapper();

    public ApiServerPodBinder(KubernetesClient client) {
        this.client = client;
    }

    @Override
    public Pod pod(String namespace, String name) throws Refusal {
        try {
            return client.pods().inNamespace(namespace).withName(name).get();
        } catch (KubernetesClientException e) {
            throw refusal("reading pod " + namespace + "/" + name, e);
        }
    }

    @Override
    public void annotate(String namespace, String name, String resourceVersion, String key, String value) throws Refusal {
        var patch = json.createObjectNode();
        var metadata = patch.putObject("metadata");
        // A resourceVersion in a merge patch is a precondition: the API server answers 409 if the pod changed since.
        metadata.put("resourceVersion", resourceVersion);
        metadata.putObject("annotations").put(key, value);
        try {
            client.pods().inNamespace(namespace).withName(name).patch(PatchContext.of(PatchType.JSON_MERGE), patch.toString());
        } catch (KubernetesClientException e) {
            throw refusal("annotating pod " + namespace + "/" + name, e);
        }
    }

    @Override
    public void removeAnnotation(String namespace, String name, String key, String value) throws Refusal {
        var path = "/metadata/annotations/" + key.replace("~", "~0").replace("/", "~1");
        var patch = json.createArrayNode();
        // "test" first: the annotation goes only while it is the one this bind wrote.
        patch.addObject().put("op", "test").put("path", path).put("value", value);
        patch.addObject().put("op", "remove").put("path", path);
        try {
            client.pods().inNamespace(namespace).withName(name).patch(PatchContext.of(PatchType.JSON), patch.toString());
        } catch (KubernetesClientException e) {
            throw refusal("removing " + key + " from pod " + namespace + "/" + name, e);
        }
    }

    @Override
    public void bind(String namespace, String name, String uid, String node) throws Refusal {
        var binding = json.createObjectNode().put("apiVersion", "v1").put("kind", "Binding");
        binding.putObject("metadata").put("name", name).put("namespace", namespace).put("uid", uid);
        binding.putObject("target").put("apiVersion", "v1").put("kind", "Node").put("name", node);
        // fabric8 has no call for the subresource kube-scheduler's binder posts to (its bindings() is the older
        // collection, another RBAC resource): post it with the client's own HTTP client, which carries its credentials.
        var url = client.getMasterUrl().toString().replaceAll("/$", "") + "/api/v1/namespaces/" + encode(namespace) + "/pods/"
                + encode(name) + "/binding";
        var http = client.getHttpClient();
        var request = http.newHttpRequestBuilder().uri(url).post("application/json", binding.toString()).build();
        io.fabric8.kubernetes.client.http.HttpResponse<String> response;
        try {
            response = http.sendAsync(request, String.class).get(BIND_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Refusal(0, "binding pod " + namespace + "/" + name + ": interrupted");
        } catch (ExecutionException | TimeoutException e) {
            throw new Refusal(0, "binding pod " + namespace + "/" + name + ": no answer from the API server: "
                    + (e.getCause() == null ? e : e.getCause()));
        }
        if (!response.isSuccessful()) {
            throw new Refusal(response.code(), "binding pod " + namespace + "/" + name + " to " + node + ": HTTP " + response.code()
                    + " " + statusMessage(response.body()));
        }
    }

    private String statusMessage(String body) {
        if (body == null) {
            return "";
        }
        try {
            var message = json.readTree(body).path("message").asText("");
            return message.isEmpty() ? body : message;
        } catch (java.io.IOException e) {
            return body;
        }
    }

    private static String encode(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8);
    }

    private static Refusal refusal(String what, KubernetesClientException e) {
        var status = e.getStatus();
        var message = status != null && status.getMessage() != null ? status.getMessage() : e.getMessage();
        return new Refusal(e.getCode(), what + ": HTTP " + e.getCode() + " " + message);
    }
}
