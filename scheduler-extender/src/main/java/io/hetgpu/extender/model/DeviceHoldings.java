package io.hetgpu.extender.model;

import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which devices each bound pod is predicted to hold. Kubelet does not publish per-pod device IDs on
 * the Node, so the extender replays the device plugin's choices: the shared allocator, fed the pods in
 * binding order. A prediction, not a record: it is right while pods were placed by hetgpu in order.
 */
public final class DeviceHoldings {

    private DeviceHoldings() {
    }

    public static Map<String, Long> predict(NodeGpus gpus, List<BoundPod> pods) {
        var holdings = new HashMap<String, Long>();
        long available = gpus.healthyMask();
        var ordered = pods.stream().filter(pod -> pod.gpuCount() > 0)
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
