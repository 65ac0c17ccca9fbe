package io.hetgpu.deviceplugin.node;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

import java.io.UncheckedIOException;

/** Reads and patches the metadata of the plugin's own Node; nothing else touches the API server. */
public final class NodeInventoryPublisher {

    private final KubernetesClient client;
    private final String nodeName;
    // Its own mapper: a merge patch needs explicit nulls for removed labels.
    private final ObjectMapper json = new ObjectMapper();

    public NodeInventoryPublisher(KubernetesClient client, String nodeName) {
        this.client = client;
        this.nodeName = nodeName;
    }

    public String nodeName() {
        return nodeName;
    }

    public NodeMetadata read() {
        var node = client.nodes().withName(nodeName).get();
        if (node == null) {
            throw new KubernetesClientException("Node " + nodeName + " does not exist (is --node-name / NODE_NAME right?)");
        }
        return metadataOf(node);
    }

    /** Applies the patch as a JSON merge patch and returns the Node's metadata as the API server now has it. */
    public NodeMetadata apply(NodePatch patch) {
        String body;
        try {
            body = json.writeValueAsString(patch.body());
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e); // a map of strings always serialises
        }
        var node = client.nodes().withName(nodeName).patch(PatchContext.of(PatchType.JSON_MERGE), body);
        return metadataOf(node);
    }

    private static NodeMetadata metadataOf(Node node) {
        return new NodeMetadata(node.getMetadata().getLabels(), node.getMetadata().getAnnotations());
    }
}
