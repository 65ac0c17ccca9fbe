package io.hetgpu.deviceplugin.dra.slices;

import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The API calls of {@link SlicePublisher}, nothing else: find the node's slices, delete the extra ones, create or update
 * the one, read it back. Every failure is the client's exception, for the publisher to retry.
 */
final class SliceWriter {

    /**
     * At most this many slices are read at a (re)start. A run of this agent leaves one; a node with more of this driver
     * than that (written by something else) keeps those not read until the agent restarts.
     */
    static final long LIST_LIMIT = 100;

    private final KubernetesClient client;
    private final String driver;
    private final String nodeName;

    SliceWriter(KubernetesClient client, String driver, String nodeName) {
        this.client = Objects.requireNonNull(client, "client");
        this.driver = Objects.requireNonNull(driver, "driver");
        this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
    }

    String nodeName() {
        return nodeName;
    }

    String driverName() {
        return driver;
    }

    /**
     * The slice as last written.
     *
     * @param slice         the API server's answer
     * @param devices       the devices written, as {@link HetgpuSlice#devices} gave them
     * @param taintsDropped whether the answer lost taints that were written
     */
    record Written(ResourceSlice slice, List<Device> devices, boolean taintsDropped) {
        Written {
            devices = List.copyOf(devices);
        }
    }

    /**
     * Writes {@code devices} at the next generation: over {@code previous} when there is one, else over the slice a
     * previous run left (extra ones deleted), else as a new slice owned by the Node.
     */
    Written write(Written previous, List<Device> devices) {
        ResourceSlice base;
        long generation;
        if (previous != null) {
            base = previous.slice();
            generation = SliceAdoption.generation(base) + 1;
        } else {
            var listed = client.resources(ResourceSlice.class).withField("spec.nodeName", nodeName).withField("spec.driver", driver)
                    .list(new ListOptionsBuilder().withLimit(LIST_LIMIT).build()).getItems();
            var adoption = SliceAdoption.of(listed, driver, nodeName);
            for (var extra : adoption.extra()) {
                client.resource(extra).delete(); // gone already is as good
            }
            base = adoption.keep().orElse(null);
            generation = adoption.storedGeneration() + 1;
        }
        var owner = base != null && ownedByNode(base) ? base.getMetadata().getOwnerReferences() : List.of(nodeOwner());
        var current = base == null || base.getSpec().getDevices() == null ? List.<Device>of() : base.getSpec().getDevices();
        var spec = HetgpuSlice.spec(driver, nodeName, generation, SliceAdoption.keepTaintTimes(devices, current));
        ResourceSlice answer;
        if (base == null) {
            answer = client.resource(new ResourceSliceBuilder().withNewMetadata().withGenerateName(nodeName + "-" + driver + "-")
                    .withOwnerReferences(owner).endMetadata().withSpec(spec).build()).create();
        } else {
            // The resourceVersion read makes this a compare-and-swap: a slice changed meanwhile answers a conflict.
            answer = client.resource(new ResourceSliceBuilder(base).editMetadata().withOwnerReferences(owner).endMetadata()
                    .withSpec(spec).build()).update();
        }
        var answered = answer.getSpec() == null || answer.getSpec().getDevices() == null ? List.<Device>of() : answer.getSpec().getDevices();
        return new Written(answer, devices, SliceAdoption.taintsDropped(spec.getDevices(), answered));
    }

    /** The written slice if the API server still has it as written; empty when it was deleted or changed by someone else. */
    Optional<Written> check(Written written) {
        var stored = client.resources(ResourceSlice.class).withName(written.slice().getMetadata().getName()).get();
        if (stored == null || !Objects.equals(stored.getMetadata().getResourceVersion(), written.slice().getMetadata().getResourceVersion())) {
            return Optional.empty();
        }
        return Optional.of(written);
    }

    private boolean ownedByNode(ResourceSlice slice) {
        var owners = slice.getMetadata().getOwnerReferences();
        return owners != null && owners.stream().anyMatch(owner -> "Node".equals(owner.getKind()) && nodeName.equals(owner.getName())
                && owner.getUid() != null && !owner.getUid().isEmpty());
    }

    /** The Node as the slice's owner, as upstream's slice controller sets it: the slice goes when the Node does. */
    private OwnerReference nodeOwner() {
        var node = client.nodes().withName(nodeName).get();
        if (node == null) {
            throw new KubernetesClientException("Node " + nodeName + " does not exist (is --node-name / NODE_NAME right?)");
        }
        return new OwnerReferenceBuilder().withApiVersion("v1").withKind("Node").withName(nodeName)
                .withUid(node.getMetadata().getUid()).withController(true).build();
    }
}
