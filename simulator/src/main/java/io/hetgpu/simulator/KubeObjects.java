package io.hetgpu.simulator;

import io.hetgpu.kubescheduler.ResourceRequest;
import io.hetgpu.kubescheduler.SchedulingNode;
import io.hetgpu.kubescheduler.SchedulingPod;
import io.hetgpu.kubescheduler.preemption.Preemptor;
import io.hetgpu.kubescheduler.preemption.RunningPod;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The simulated cluster's nodes and pods as the kube-scheduler model's records: the simulator's adapter to it. */
final class KubeObjects {

    static final String GPU = "nvidia.com/gpu";

    private KubeObjects() {
    }

    /** A node as kube-scheduler sees it: its allocatable cpu, memory, pods and healthy GPUs (what kubelet advertises). */
    static SchedulingNode node(SimNode node) {
        var allocatable = new HashMap<String, BigDecimal>();
        allocatable.put("cpu", BigDecimal.valueOf(node.allocatable().milliCpu(), 3));
        allocatable.put("memory", BigDecimal.valueOf(node.allocatable().memory()));
        allocatable.put("pods", BigDecimal.valueOf(SimNode.MAX_PODS));
        allocatable.put(GPU, BigDecimal.valueOf(Long.bitCount(node.gpus().healthyMask())));
        return new SchedulingNode(node.name(), false, Map.of(), List.of(), allocatable);
    }

    static ResourceRequest request(Job.Pod pod) {
        var requests = pod.requests();
        var amounts = new HashMap<String, BigDecimal>();
        amounts.put("cpu", BigDecimal.valueOf(requests.milliCpu(), 3));
        amounts.put("memory", BigDecimal.valueOf(requests.memory()));
        if (pod.gpus() > 0) {
            amounts.put(GPU, BigDecimal.valueOf(pod.gpus()));
        }
        return new ResourceRequest(amounts);
    }

    /** The pod's UID (and name): one per pod of a job, the same across restarts, as a Job controller's pods are not. */
    static String uid(Job job, int podIndex) {
        return "job-" + job.id() + "-" + podIndex;
    }

    static Preemptor preemptor(Job job, int podIndex) {
        return new Preemptor(uid(job, podIndex), SchedulingPod.requesting(request(job.pods().get(podIndex))), job.priority(), false, "");
    }

    /** @param startSeconds when the pod's current run started, seconds into the trace */
    static RunningPod running(Job job, int podIndex, double startSeconds) {
        return new RunningPod(uid(job, podIndex), "sim", Map.of(), job.priority(), instant(startSeconds),
                request(job.pods().get(podIndex)), false);
    }

    /** Seconds into the trace as an instant (the trace starts at the epoch). */
    static Instant instant(double seconds) {
        return Instant.ofEpochMilli(Math.round(seconds * 1000));
    }
}
