package io.hetgpu.kubescheduler.preemption;

import io.hetgpu.kubescheduler.ResourceRequest;
import io.hetgpu.kubescheduler.SchedulingNode;
import io.hetgpu.kubescheduler.SchedulingPod;
import io.hetgpu.kubescheduler.filter.NodeFit;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** Hand-built pods and nodes: GPUs are the only resource that matters in these tests. */
final class Pods {

    static final Instant T0 = Instant.parse("2026-11-01T00:00:00Z");

    private Pods() {
    }

    static ResourceRequest gpus(int count) {
        return new ResourceRequest(Map.of("nvidia.com/gpu", BigDecimal.valueOf(count)));
    }

    static RunningPod running(String uid, int priority, int gpus, int startedMinute) {
        return new RunningPod(uid, "ml", Map.of("job", uid.replaceAll("-\\d+$", "")), priority, T0.plusSeconds(60L * startedMinute), gpus(gpus), false);
    }

    static SchedulingNode node(String name, int gpus) {
        return new SchedulingNode(name, false, Map.of(), List.of(), Map.of("nvidia.com/gpu", BigDecimal.valueOf(gpus)));
    }

    static Preemptor preemptor(int priority, int gpus) {
        return new Preemptor("urgent", SchedulingPod.requesting(gpus(gpus)), priority, false, "");
    }

    /** kube-scheduler's own filters only. */
    static VictimSelection.Fit kubeFit(Preemptor preemptor) {
        return (node, left) -> NodeFit.check(preemptor.pod(), node, left.stream().map(RunningPod::request).toList()).isEmpty();
    }
}
