package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.DraLookup;
import io.hetgpu.extender.model.NodeSlices;
import io.hetgpu.extender.model.SliceReader;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * DRA's objects as one list of each showed them, read as the informers read them ({@link SliceReader},
 * {@link ClaimHoldings}): what a tool that reads the cluster once hands {@link ListedClusterView}, so that its answers
 * for DRA pods are the extender's. Immutable.
 */
public final class ListedDra implements DraLookup {

    /** A cluster that serves no DRA, or a tool that did not list it. */
    public static final ListedDra NONE = new ListedDra(List.of(), List.of(), List.of(), CardCatalog.defaults());

    private final Map<String, NodeSlices> slicesByNode = new HashMap<>();
    private final Map<String, List<ResourceClaim>> claimsByNode = new HashMap<>();
    private final Map<String, ResourceClaim> claims = new LinkedHashMap<>();
    private final Map<String, DeviceClass> classes = new LinkedHashMap<>();

    public ListedDra(List<ResourceSlice> slices, List<ResourceClaim> claims, List<DeviceClass> classes, CardCatalog catalog) {
        var byNode = new HashMap<String, List<ResourceSlice>>();
        var nodeOfPool = new HashMap<List<String>, String>();
        for (var slice : slices) {
            var spec = slice.getSpec();
            if (spec != null && spec.getNodeName() != null) {
                byNode.computeIfAbsent(spec.getNodeName(), node -> new ArrayList<>()).add(slice);
                if (spec.getPool() != null) {
                    nodeOfPool.put(List.of(String.valueOf(spec.getDriver()), String.valueOf(spec.getPool().getName())), spec.getNodeName());
                }
            }
        }
        byNode.forEach((node, listed) -> {
            var read = SliceReader.read(node, listed, catalog);
            if (!read.equals(NodeSlices.NONE)) {
                slicesByNode.put(node, read);
            }
        });
        for (var claim : claims) {
            this.claims.put(claim.getMetadata().getNamespace() + "/" + claim.getMetadata().getName(), claim);
            for (var node : ClaimHoldings.nodesOf(claim, nodeOfPool::get)) {
                claimsByNode.computeIfAbsent(node, name -> new ArrayList<>()).add(claim);
            }
        }
        classes.forEach(one -> this.classes.put(one.getMetadata().getName(), one));
    }

    /** The GPUs the node's slices publish. */
    public NodeSlices slicesOf(String node) {
        return slicesByNode.getOrDefault(node, NodeSlices.NONE);
    }

    /** The holdings of the claims allocated on the node. */
    public List<BoundPod> claimHoldings(String node, Function<String, Pod> pods) {
        var onNode = claimsByNode.get(node);
        return onNode == null ? List.of() : ClaimHoldings.of(onNode, pods);
    }

    @Override
    public ResourceClaim claim(String namespace, String name) {
        return claims.get(namespace + "/" + name);
    }

    @Override
    public DeviceClass deviceClass(String name) {
        return classes.get(name);
    }

    @Override
    public DeviceClass extendedResourceClass(String resourceName) {
        for (var one : classes.values()) {
            if (one.getSpec() != null && resourceName.equals(one.getSpec().getExtendedResourceName())) {
                return one;
            }
        }
        return null;
    }
}
