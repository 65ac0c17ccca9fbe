package io.hetgpu.deviceplugin.dra.slices;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaintBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What the publisher does with the slices it finds for its node and driver when it (re)starts: keep the one with the
 * highest pool generation and update it in place, delete the others, and write above every generation stored, so a
 * scheduler never prefers a stale copy. Pure; also the rules that carry a slice's taints from one write to the next.
 *
 * @param keep             the slice to update, none when a new one is to be created
 * @param extra            slices of this node and driver to delete
 * @param storedGeneration the highest pool generation among them (0 for none)
 */
public record SliceAdoption(Optional<ResourceSlice> keep, List<ResourceSlice> extra, long storedGeneration) {

    public SliceAdoption {
        extra = List.copyOf(extra);
    }

    /**
     * Sorts the listed slices; those of another node or driver (an API server that ignored the field selector) are
     * neither kept nor deleted.
     */
    public static SliceAdoption of(List<ResourceSlice> listed, String driver, String nodeName) {
        var ours = listed.stream().filter(slice -> slice.getSpec() != null && driver.equals(slice.getSpec().getDriver())
                && nodeName.equals(slice.getSpec().getNodeName())).toList();
        var keep = ours.stream().max(Comparator.comparingLong(SliceAdoption::generation)
                // Among equals the oldest name wins, so two restarts pick the same one.
                .thenComparing(slice -> slice.getMetadata().getName(), Comparator.reverseOrder()));
        var extra = ours.stream().filter(slice -> keep.isEmpty() || slice != keep.get()).toList();
        long stored = ours.stream().mapToLong(SliceAdoption::generation).max().orElse(0);
        return new SliceAdoption(keep, extra, stored);
    }

    static long generation(ResourceSlice slice) {
        var pool = slice.getSpec() == null ? null : slice.getSpec().getPool();
        return pool == null || pool.getGeneration() == null ? 0 : pool.getGeneration();
    }

    /**
     * {@code desired} with each taint's {@code timeAdded} taken from the same taint (key, value, effect) of the same
     * device in {@code current}, as upstream's slice controller does: the API server stamps a taint without one, and the
     * time it was first seen is what tells a long-broken GPU from one that just broke.
     */
    public static List<Device> keepTaintTimes(List<Device> desired, List<Device> current) {
        var currentByName = new HashMap<String, Device>();
        for (var device : current) {
            currentByName.put(device.getName(), device);
        }
        var result = new ArrayList<Device>(desired.size());
        for (var device : desired) {
            var before = currentByName.get(device.getName());
            if (device.getTaints() == null || device.getTaints().isEmpty() || before == null || before.getTaints() == null) {
                result.add(device);
                continue;
            }
            var taints = device.getTaints().stream().map(taint -> before.getTaints().stream()
                    .filter(old -> sameTaint(old, taint) && old.getTimeAdded() != null).findFirst()
                    .map(old -> new DeviceTaintBuilder(taint).withTimeAdded(old.getTimeAdded()).build()).orElse(taint)).toList();
            result.add(new DeviceBuilder(device).withTaints(taints).build());
        }
        return List.copyOf(result);
    }

    /** Whether the API server's answer lost a taint that was written: it does not serve device taints. */
    public static boolean taintsDropped(List<Device> written, List<Device> answered) {
        var answeredByName = new HashMap<String, Device>();
        for (var device : answered) {
            answeredByName.put(device.getName(), device);
        }
        return written.stream().anyMatch(device -> device.getTaints() != null && !device.getTaints().isEmpty()
                && Optional.ofNullable(answeredByName.get(device.getName())).map(Device::getTaints).map(List::isEmpty).orElse(true));
    }

    private static boolean sameTaint(DeviceTaint a, DeviceTaint b) {
        return Objects.equals(a.getKey(), b.getKey()) && Objects.equals(emptyIfNull(a.getValue()), emptyIfNull(b.getValue()))
                && Objects.equals(a.getEffect(), b.getEffect());
    }

    private static String emptyIfNull(String value) {
        return value == null ? "" : value;
    }
}
