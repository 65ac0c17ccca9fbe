package io.hetgpu.testcluster.draplacement;

import io.hetgpu.deviceplugin.dra.slices.HetgpuSlice;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.profile.ProfileFormatException;
import io.hetgpu.gpu.profile.ProfileLoader;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.CpuMemory;
import io.hetgpu.kubescheduler.dra.Device;
import io.hetgpu.kubescheduler.dra.DeviceAttribute;
import io.hetgpu.kubescheduler.dra.ResourceSlice;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.scheduler.DraObjects;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A cluster's GPU nodes as kube-scheduler's DRA allocator sees them when hetgpu's driver publishes them: the
 * ResourceSlice a test-cluster node of hetgpu's DRA driver publishes ({@link HetgpuSlice#of}, over the node's simulated
 * profile), read as the test cluster's scheduler reads it ({@link DraObjects#slice}).
 */
public final class DraNodes {

    /** One node: what kube-scheduler's default scores read, and its slice. */
    public record Node(String name, CpuMemory allocatable, ResourceSlice slice) {

        /** A device's attributes by name. */
        public Map<String, DeviceAttribute> attributes(String device) {
            return slice.devices().stream().filter(d -> d.name().equals(device)).findFirst().map(Device::attributes).orElse(Map.of());
        }
    }

    private DraNodes() {
    }

    /** The GPU nodes of {@code specs}, in their order (CPU-only nodes publish no slice and hold no claim). */
    public static List<Node> of(List<NodeSpec> specs, CardCatalog catalog) {
        var profiles = new HashMap<String, io.hetgpu.gpu.profile.MachineProfile>();
        var nodes = new ArrayList<Node>();
        for (var spec : specs) {
            if (spec.profile().isEmpty()) {
                continue;
            }
            var profile = profiles.computeIfAbsent(spec.profile().get(), DraNodes::load);
            var slice = DraObjects.slice(HetgpuSlice.of(spec.name(), profile.topology(spec.name()), catalog));
            nodes.add(new Node(spec.name(), CpuMemory.of(spec.cpus(), spec.memoryGi()), slice));
        }
        return List.copyOf(nodes);
    }

    private static io.hetgpu.gpu.profile.MachineProfile load(String profile) {
        try {
            return ProfileLoader.load(profile);
        } catch (ProfileFormatException e) {
            throw new IllegalArgumentException("profile " + profile + ": " + e.getMessage(), e);
        }
    }

    /** Every tier the nodes' devices publish. */
    public static List<Integer> tiers(List<Node> nodes) {
        return nodes.stream().flatMap(n -> n.slice().devices().stream())
                .map(d -> d.attributes().get(HetgpuDra.TIER))
                .filter(a -> a instanceof DeviceAttribute.IntValue)
                .map(a -> (int) ((DeviceAttribute.IntValue) a).value())
                .distinct().sorted().toList();
    }
}
