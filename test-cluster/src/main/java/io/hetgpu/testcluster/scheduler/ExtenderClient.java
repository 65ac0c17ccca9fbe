package io.hetgpu.testcluster.scheduler;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Calls an extender the way kube-scheduler's HTTPExtender does: POST {@code urlPrefix/verb} with an
 * ExtenderArgs body ({@code {"Pod":…,"Nodes":…,"NodeNames":…}}, unused fields as {@code null}), the
 * configured timeout, and any status but 200 or a non-empty {@code Error} counted as failure.
 */
public final class ExtenderClient implements SchedulerExtender {

    private final ExtenderSettings settings;
    private final HttpClient http;
    private final ObjectMapper json = new ObjectMapper();
    private final KubernetesSerialization kubernetes = new KubernetesSerialization();

    public ExtenderClient(ExtenderSettings settings, HttpClient http) {
        this.settings = settings;
        this.http = http;
    }

    @Override
    public ExtenderSettings settings() {
        return settings;
    }

    @Override
    public FilterOutcome filter(Pod pod, List<Node> nodes) throws ExtenderCallException {
        var answer = call(settings.filterVerb(), args(pod, nodes));
        if (!answer.isObject()) {
            throw new ExtenderCallException("filter answered " + abbreviate(answer) + ", not an ExtenderFilterResult");
        }
        var error = answer.path("Error").asText("");
        if (!error.isEmpty()) {
            throw new ExtenderCallException(error);
        }
        var feasible = new ArrayList<String>();
        if (settings.nodeCacheCapable()) {
            answer.path("NodeNames").forEach(name -> feasible.add(name.asText()));
        } else {
            answer.path("Nodes").path("items").forEach(node -> feasible.add(node.path("metadata").path("name").asText()));
        }
        return new FilterOutcome(feasible, reasons(answer.path("FailedNodes")), reasons(answer.path("FailedAndUnresolvableNodes")));
    }

    @Override
    public Map<String, Long> prioritize(Pod pod, List<Node> nodes) throws ExtenderCallException {
        var answer = call(settings.prioritizeVerb(), args(pod, nodes));
        if (!answer.isArray()) {
            throw new ExtenderCallException("prioritize answered " + abbreviate(answer) + ", not a HostPriorityList array");
        }
        var scores = new HashMap<String, Long>();
        for (var entry : answer) {
            scores.put(entry.path("Host").asText(), entry.path("Score").asLong());
        }
        return scores;
    }

    /**
     * kube-scheduler's extender binder: {@code ExtenderBindingArgs} to the bind verb. An empty answer's {@code Error}
     * means bound; any other text is why not, and kube-scheduler retries the pod.
     */
    @Override
    public String bind(Pod pod, String node) throws ExtenderCallException {
        var args = json.createObjectNode();
        args.put("PodName", pod.getMetadata().getName());
        args.put("PodNamespace", pod.getMetadata().getNamespace());
        args.put("PodUID", pod.getMetadata().getUid());
        args.put("Node", node);
        var answer = call(settings.bindVerb(), args);
        if (!answer.isObject()) {
            throw new ExtenderCallException("bind answered " + abbreviate(answer) + ", not an ExtenderBindingResult");
        }
        return answer.path("Error").asText("");
    }

    /**
     * The victims by UID when the extender is nodeCacheCapable ({@code NodeNameToMetaVictims}), as whole pods otherwise
     * ({@code NodeNameToVictims}).
     */
    @Override
    public Map<String, Map.Entry<List<String>, Long>> preempt(Pod pod, Map<String, List<Pod>> victims, Map<String, Long> pdbViolations)
            throws ExtenderCallException {
        var args = json.createObjectNode();
        args.set("Pod", kubernetes.convertValue(pod, JsonNode.class));
        var byNode = args.putObject(settings.nodeCacheCapable() ? "NodeNameToMetaVictims" : "NodeNameToVictims");
        victims.forEach((node, pods) -> {
            var entry = byNode.putObject(node);
            var list = entry.putArray("Pods");
            pods.forEach(victim -> {
                if (settings.nodeCacheCapable()) {
                    list.addObject().put("UID", victim.getMetadata().getUid());
                } else {
                    list.add(kubernetes.convertValue(victim, JsonNode.class));
                }
            });
            entry.put("NumPDBViolations", pdbViolations.getOrDefault(node, 0L));
        });
        args.putNull(settings.nodeCacheCapable() ? "NodeNameToVictims" : "NodeNameToMetaVictims");
        var answer = call(settings.preemptVerb(), args);
        if (!answer.isObject()) {
            throw new ExtenderCallException("preempt answered " + abbreviate(answer) + ", not an ExtenderPreemptionResult");
        }
        var kept = new java.util.LinkedHashMap<String, Map.Entry<List<String>, Long>>();
        answer.path("NodeNameToMetaVictims").fields().forEachRemaining(entry -> {
            var uids = new ArrayList<String>();
            entry.getValue().path("Pods").forEach(victim -> uids.add(victim.path("UID").asText()));
            kept.put(entry.getKey(), Map.entry(uids, entry.getValue().path("NumPDBViolations").asLong()));
        });
        return kept;
    }

    private ObjectNode args(Pod pod, List<Node> nodes) {
        var args = json.createObjectNode();
        args.set("Pod", kubernetes.convertValue(pod, JsonNode.class));
        if (settings.nodeCacheCapable()) {
            args.putNull("Nodes");
            var names = args.putArray("NodeNames");
            nodes.forEach(node -> names.add(node.getMetadata().getName()));
        } else {
            var list = args.putObject("Nodes");
            list.putObject("metadata");
            var items = list.putArray("items");
            nodes.forEach(node -> items.add(kubernetes.convertValue(node, JsonNode.class)));
            args.putNull("NodeNames");
        }
        return args;
    }

    private JsonNode call(String verb, ObjectNode body) throws ExtenderCallException {
        var url = settings.urlPrefix().replaceAll("/+$", "") + "/" + verb;
        try {
            var request = HttpRequest.newBuilder(URI.create(url))
                    .timeout(settings.httpTimeout())
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(json.writeValueAsBytes(body)))
                    .build();
            var response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
            if (response.statusCode() != 200) {
                throw new ExtenderCallException("POST " + url + " answered HTTP " + response.statusCode());
            }
            return json.readTree(response.body());
        } catch (HttpTimeoutException e) {
            throw new ExtenderCallException("POST " + url + " timed out after " + settings.httpTimeout().toMillis() + " ms");
        } catch (IOException e) {
            throw new ExtenderCallException("POST " + url + " failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ExtenderCallException("POST " + url + " interrupted");
        }
    }

    private static Map<String, String> reasons(JsonNode map) {
        var reasons = new HashMap<String, String>();
        map.fields().forEachRemaining(entry -> reasons.put(entry.getKey(), entry.getValue().asText()));
        return reasons;
    }

    private static String abbreviate(JsonNode node) {
        var text = node.toString();
        return text.length() > 120 ? text.substring(0, 117) + "..." : text;
    }
}
