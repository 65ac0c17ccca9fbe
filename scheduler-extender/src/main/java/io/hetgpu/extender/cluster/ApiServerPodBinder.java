package io.hetgpu.extender.cluster;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@link PodBinder} over fabric8: RBAC needs pods get and patch, and pods/binding create.
 *
 * <p>A bind must end within kube-scheduler's {@code httpTimeout}, and fabric8's own retries (10 by default, with backoff)
 * would outlive it many times over: {@link #forBinds} gives the binder a client of its own, the main client's
 * configuration with no retries and every request limited to the bind's budget. The bind verb stops waiting at its own
 * deadline; these limits make sure a call it left behind ends soon after too.
 */
public final class ApiServerPodBinder implements PodBinder, AutoCloseable {

    private final KubernetesClient client;
    private final long timeoutMillis;
    private final boolean ownsClient;
    private final ObjectMapper json = new ObjectMapper();

    /** Over {@code client} as it is configured (its retries included): for tests that stage API answers. */
    public ApiServerPodBinder(KubernetesClient client) {
        this(client, client.getConfiguration().getRequestTimeout(), false);
    }

    private ApiServerPodBinder(KubernetesClient client, long timeoutMillis, boolean ownsClient) {
        this.client = client;
        this.timeoutMillis = timeoutMillis <= 0 ? Long.MAX_VALUE : timeoutMillis;
        this.ownsClient = ownsClient;
    }

    /**
     * A binder with a client of its own derived from {@code main}'s configuration: no retries, and each request (connect,
     * read, the whole of it) limited to {@code budget}.
     */
    public static ApiServerPodBinder forBinds(KubernetesClient main, Duration budget) {
        int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, budget.toMillis()));
        var config = new ConfigBuilder(main.getConfiguration())
                .withRequestRetryBackoffLimit(0)
                .withRequestTimeout(millis)
                .withConnectionTimeout(millis)
                .build();
        return new ApiServerPodBinder(new KubernetesClientBuilder().withConfig(config).build(), millis, true);
    }

    @Override
    public void close() {
        if (ownsClient) {
            client.close();
        }
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
        var builder = http.newHttpRequestBuilder().uri(url).post("application/json", binding.toString());
        if (timeoutMillis != Long.MAX_VALUE) {
            builder.timeout(timeoutMillis, TimeUnit.MILLISECONDS);
        }
        var request = builder.build();
        io.fabric8.kubernetes.client.http.HttpResponse<String> response;
        try {
            response = http.sendAsync(request, String.class).get(timeoutMillis, TimeUnit.MILLISECONDS);
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
