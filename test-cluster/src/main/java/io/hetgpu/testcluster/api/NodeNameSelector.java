package io.hetgpu.testcluster.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.mockwebserver.http.MockResponse;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The {@code spec.nodeName} field selector on pods, which the API server serves (a kubelet and hetgpu's device plugin
 * watch the pods of their node with it) and fabric8's CRUD mock does not: it answers any field selector but
 * {@code metadata.name}/{@code metadata.namespace} with nothing. A list is filtered as the API server filters it; a
 * watch gets every pod's events, which a client that checks the node itself (the plugin does) tells apart.
 */
final class NodeNameSelector {

    private static final Pattern SELECTOR = Pattern.compile("fieldSelector=spec\\.nodeName(?:%3D|=)([^&]*)&?");
    private static final ObjectMapper JSON = new ObjectMapper();

    private NodeNameSelector() {
    }

    /** The node a request's selector names, or empty when it has none. */
    static Optional<String> node(String path) {
        var matcher = SELECTOR.matcher(path);
        return matcher.find() ? Optional.of(URLDecoder.decode(matcher.group(1), StandardCharsets.UTF_8)) : Optional.empty();
    }

    static String without(String path) {
        return SELECTOR.matcher(path).replaceAll("").replaceAll("[?&]$", "");
    }

    /** A list of pods answered for the selector: every pod from {@code list}, then only those bound to the node. */
    static MockResponse list(String path, Function<String, MockResponse> list) {
        var node = node(path);
        var response = list.apply(without(path));
        if (node.isEmpty() || response.code() != 200) {
            return response;
        }
        try {
            var body = (ObjectNode) JSON.readTree(response.getBody().readUtf8());
            var kept = JSON.createArrayNode();
            body.path("items").forEach(pod -> {
                if (node.get().equals(pod.path("spec").path("nodeName").asText(""))) {
                    kept.add(pod);
                }
            });
            body.set("items", kept);
            return new MockResponse().setResponseCode(200).setBody(body.toString());
        } catch (IOException | ClassCastException e) {
            return response;
        }
    }
}
