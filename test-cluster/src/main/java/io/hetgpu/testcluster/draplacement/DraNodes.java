package io.hetgpu.testcluster.draplacement;

import io.hetgpu.deviceplugin.dra.slices.HetgpuSlice;
import io.hetgpu.gpu.LinkMatrix;
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

    /** One node: what kube-scheduler's default scores read, its slice, and its GPUs' links (to judge a placement by). */
    public record Node(String name, CpuMemory allocatable, ResourceSlice slice, LinkMatrix links) {

        /**
         * Whether the devices (by name) form one NVLink-connected group: every GPU reaches every other over NVLink links
         * between the devices themselves, directly or through another of them.
         */
        public boolean nvlinkConnected(List<String> devices) {
            var positions = devices.stream().map(HetgpuDra::positionOf).toList();
            if (positions.isEmpty() || positions.stream().anyMatch(java.util.Optional::isEmpty)) {
                return false;
            }
            var members = positions.stream().map(java.util.Optional::get).toList();
            var reached = new java.util.HashSet<Integer>(List.of(members.get(0)));
            var frontier = new java.util.ArrayDeque<Integer>(reached);
            while (!frontier.isEmpty()) {
                int from = frontier.poll();
                for (int to : members) {
                    if (!reached.contains(to) && links.isNvlink(from, to)) {
                        reached.add(to);
                        frontier.add(to);
                    }
                }
            }
            return reached.size() == new java.util.HashSet<>(members).size();
        }

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
            var topology = profile.topology(spec.name());
            var slice = DraObjects.slice(HetgpuSlice.of(spec.name(), topology, catalog));
            nodes.add(new Node(spec.name(), CpuMemory.of(spec.cpus(), spec.memoryGi()), slice, topology.links()));
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
