package io.hetgpu.extender.model;

import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which devices each bound pod holds. A pod the extender's bind verb bound carries the record
 * ({@code hetgpu.io/gpu-devices}, read into {@link BoundPod#devices()}): its devices are taken as written. For
 * the others (bound by kube-scheduler itself: no {@code bindVerb}, or before the handshake) kubelet publishes no
 * per-pod device IDs on the Node, so the extender replays the device plugin's choices on the devices the
 * records leave: the shared allocator, fed those pods in binding order. That part is a prediction, right while
 * pods were placed by hetgpu in order. A pod being bound ({@link BoundPod#binding()}) holds its record's devices.
 */
public final class DeviceHoldings {

    private DeviceHoldings() {
    }

    /**
     * The devices the bound pods {@code which} accepts hold, each as {@link #predict} finds it among all the node's pods.
     * A bind in flight ({@link BoundPod#binding()}) is never among them: it runs nowhere yet, nothing can evict it.
     */
    public static long heldBy(NodeGpus gpus, List<BoundPod> pods, java.util.function.Predicate<BoundPod> which) {
        if (pods.stream().noneMatch(pod -> pod.gpuCount() > 0 && !pod.binding() && which.test(pod))) {
            return 0;
        }
        var holdings = predict(gpus, pods);
        long held = 0;
        for (var pod : pods) {
            if (!pod.binding() && which.test(pod)) {
                held |= holdings.getOrDefault(pod.uid(), 0L);
            }
        }
        return held;
    }

    public static Map<String, Long> predict(NodeGpus gpus, List<BoundPod> pods) {
        var holdings = new HashMap<String, Long>();
        long available = gpus.healthyMask();
        var predicted = new java.util.ArrayList<BoundPod>();
        for (var pod : pods) {
            var recorded = gpus.maskOf(pod.devices());
            if (recorded.isPresent()) {
                holdings.put(pod.uid(), recorded.getAsLong());
                available &= ~recorded.getAsLong();
            } else if (!pod.binding()) {
                // A bind in flight without a record readable here holds nothing here.
                predicted.add(pod);
            }
        }
        var ordered = predicted.stream().filter(pod -> pod.gpuCount() > 0)
                .sorted(Comparator.comparing(BoundPod::boundAt).thenComparing(BoundPod::uid)).toList();
        for (var pod : ordered) {
            int size = Math.min(pod.gpuCount(), Long.bitCount(available));
            var set = gpus.allocator().choose(available, 0, size, pod.requireNvlink());
            if (set.isEmpty()) {
                set = gpus.allocator().choose(available, 0, size, false);
            }
            long mask = 0;
            for (int position : set.orElseThrow().positions()) {
                mask |= 1L << position;
            }
            available &= ~mask;
            holdings.put(pod.uid(), mask);
        }
        return holdings;
    }
}
