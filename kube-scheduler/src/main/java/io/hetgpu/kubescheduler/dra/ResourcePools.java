package io.hetgpu.kubescheduler.dra;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;

/**
 * The pools a node can reach, as kube-scheduler gathers them ({@code GatherPools} in
 * k8s.io/dynamic-resource-allocation/structured): the slices for the node or for all nodes, out-dated generations
 * dropped, a pool incomplete when fewer slices than {@code resourceSliceCount} are at hand, invalid when a device name
 * repeats. Upstream keeps the pools in a Go map, so their order is unspecified there; here it is the order in which
 * the slices first name them, which is what makes the model's first fit reproducible.
 *
 * <p>Not modelled: slices chosen by a node selector, and per-device node selection.
 */
public final class ResourcePools {

    private ResourcePools() {
    }

    /**
     * A pool with the devices of its current slices, in slice order.
     *
     * @param nodeLocal its slices name the node (else they serve all nodes): an allocation from it ties the claim to the node
     */
    public record Pool(String driver, String pool, boolean nodeLocal, boolean incomplete, Optional<String> invalidReason,
                       List<Device> devices) {

        public Pool {
            devices = List.copyOf(devices);
        }

        @Override
        public String toString() {
            return driver + "/" + pool;
        }
    }

    public static List<Pool> gather(String nodeName, List<ResourceSlice> slices) {
        record Key(String driver, String pool) {
        }
        var current = new LinkedHashMap<Key, List<ResourceSlice>>();
        for (var slice : slices) {
            if (!slice.allNodes() && (slice.nodeName().isEmpty() || !slice.nodeName().equals(nodeName))) {
                continue;
            }
            var known = current.computeIfAbsent(new Key(slice.driver(), slice.pool()), k -> new ArrayList<>());
            if (!known.isEmpty() && slice.poolGeneration() < known.get(0).poolGeneration()) {
                continue;
            }
            if (!known.isEmpty() && slice.poolGeneration() > known.get(0).poolGeneration()) {
                known.clear();
            }
            known.add(slice);
        }
        var pools = new ArrayList<Pool>(current.size());
        for (var entry : current.entrySet()) {
            var poolSlices = entry.getValue();
            var devices = new ArrayList<Device>();
            var names = new HashSet<String>();
            Optional<String> invalid = Optional.empty();
            for (var slice : poolSlices) {
                for (var device : slice.devices()) {
                    if (!names.add(device.name()) && invalid.isEmpty()) {
                        invalid = Optional.of("duplicate device name " + Quotes.quote(device.name()));
                    }
                    devices.add(device);
                }
            }
            var incomplete = poolSlices.size() != poolSlices.get(0).resourceSliceCount();
            var nodeLocal = poolSlices.stream().anyMatch(slice -> !slice.allNodes());
            pools.add(new Pool(entry.getKey().driver(), entry.getKey().pool(), nodeLocal, incomplete, invalid, devices));
        }
        return pools;
    }
}
