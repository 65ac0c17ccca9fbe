package io.hetgpu.extender.model;

import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A node's GPUs from the best source it has: hetgpu's inventory; else the GPUs a DRA driver publishes in the node's
 * ResourceSlices, where the node offers no GPU resource of a device plugin; else GPU Feature Discovery's labels with
 * the count kubelet offers; else that count alone, as GPUs of unknown model. A source that cannot be read
 * hands over to the next, and the reason goes into the node's description, so a malformed label changes
 * what the extender knows of one node but never breaks a decision.
 */
public final class NodeGpuReader {

    private static final Pattern WHOLE_NUMBER = Pattern.compile("\\d{1,9}");

    private final CardCatalog catalog;
    private final String resourceName;
    private final InventoryCodec inventoryCodec = new InventoryCodec();

    /** @param resourceName the GPU resource pods request, whose allocatable count is read ({@code nvidia.com/gpu}) */
    public NodeGpuReader(CardCatalog catalog, String resourceName) {
        this.catalog = catalog;
        this.resourceName = resourceName;
    }

    public NodeGpus read(NodeFacts node) {
        var notes = new ArrayList<String>();
        if (node.inventory() != null) {
            try {
                return NodeGpus.of(inventoryCodec.decode(node.inventory()), catalog);
            } catch (InventoryFormatException | RuntimeException e) {
                // Whatever fails in reading it, the inventory is this node's problem only.
                var problem = HetgpuKeys.ANNOTATION_INVENTORY + " unreadable: "
                        + (e instanceof InventoryFormatException ? e.getMessage() : Quote.cut(e));
                if (node.gpuAllocatable() == null) {
                    return NodeGpus.unreadable(problem);
                }
                notes.add(problem);
            }
        }
        var slices = node.slices();
        if (slices.publishesGpus() && offeredNone(node.gpuAllocatable())) {
            // A DRA node: kube-scheduler serves even a plain GPU resource request there from the slices (an extended
            // resource backed by a DeviceClass), since no device plugin offers it.
            if (!slices.problem().isEmpty()) {
                notes.add(slices.problem());
                return NodeGpus.unreadable(String.join("; ", notes));
            }
            return NodeGpus.of(slices, catalog);
        }
        if (slices.publishesGpus()) {
            notes.add("ResourceSlices also publish GPUs here; read as the device plugin offers them");
        }
        int offered;
        if (node.gpuAllocatable() == null) {
            offered = 0;
        } else if (WHOLE_NUMBER.matcher(node.gpuAllocatable().strip()).matches()) {
            offered = Integer.parseInt(node.gpuAllocatable().strip());
        } else {
            notes.add("status.allocatable[" + resourceName + "]: expected a whole number of GPUs, got "
                    + Quote.of(node.gpuAllocatable()));
            return NodeGpus.unreadable(String.join("; ", notes));
        }
        if (offered > NodeGpus.MAX_GPUS) {
            notes.add("status.allocatable[" + resourceName + "] is " + offered + ": counted as " + NodeGpus.MAX_GPUS);
            offered = NodeGpus.MAX_GPUS;
        }
        if (FeatureDiscoveryReader.labelled(node.labels())) {
            var labelled = featureDiscovery(node, offered, notes);
            if (labelled != null) {
                return labelled;
            }
        } else if (offered > 0) {
            notes.add("no GPU Feature Discovery labels");
        }
        if (offered > 0) {
            return NodeGpus.of(new NodeGpuSource.AllocatableOnly(offered, String.join("; ", notes)), catalog);
        }
        // GPUs by some account (a broken inventory or labels) and none offered: a GPU node with none to give.
        return notes.isEmpty() ? NodeGpus.NONE : NodeGpus.unreadable(String.join("; ", notes));
    }

    /** Whether a device plugin offers no GPU on the node: no allocatable count, or one of zero. */
    private static boolean offeredNone(String allocatable) {
        return allocatable == null || allocatable.strip().equals("0");
    }

    /** GFD's description, or null (with the reason added to the notes) when it cannot be used. */
    private NodeGpus featureDiscovery(NodeFacts node, int offered, List<String> notes) {
        try {
            int count = offered;
            if (offered == 0) {
                // GFD saw GPUs that kubelet does not offer (unhealthy, or the plugin not registered yet):
                // the node still has GPUs, none of them to give.
                count = Math.min(NodeGpus.MAX_GPUS, FeatureDiscoveryReader.labelledCount(node.labels()));
                if (count == 0) {
                    return null;
                }
                notes.add("none offered in status.allocatable[" + resourceName + "]");
            }
            var labels = FeatureDiscoveryReader.read(node.labels(), count, String.join("; ", notes));
            return labels.map(source -> NodeGpus.of(source, offered, catalog)).orElse(null);
        } catch (IllegalArgumentException e) {
            notes.add("GPU Feature Discovery labels unusable: " + e.getMessage());
            return null;
        }
    }
}
