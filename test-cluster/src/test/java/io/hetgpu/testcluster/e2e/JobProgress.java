package io.hetgpu.testcluster.e2e;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.extender.Extender;
import io.hetgpu.extender.job.JobMembershipReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.awaitility.Awaitility;

/**
 * How far each job of several pods is placed, read from the API server with the extender's own reader of which job a pod
 * belongs to (any convention: a training job, {@code hetgpu.io/job}…).
 */
record JobProgress(KubernetesClient client) {

    /**
     * One job now.
     *
     * @param pods  its pods that exist
     * @param bound how many of them a node holds
     */
    record State(String job, List<Pod> pods, int bound) {

        /** Some pods placed, others not: the job cannot run, and the placed ones hold their GPUs. */
        boolean halfPlaced() {
            return bound > 0 && bound < pods.size();
        }

        boolean whole() {
            return bound == pods.size();
        }
    }

    /** Every job by its key (namespace/name), its pods as the API server holds them now. */
    Map<String, State> now() {
        var pods = new TreeMap<String, List<Pod>>();
        for (var pod : client.pods().inAnyNamespace().list().getItems()) {
            JobMembershipReader.keyOf(pod).ifPresent(job -> pods.computeIfAbsent(job, key -> new ArrayList<>()).add(pod));
        }
        var states = new TreeMap<String, State>();
        pods.forEach((job, members) -> states.put(job, new State(job, members, (int) members.stream().filter(GpuHolders::isBound).count())));
        return states;
    }

    /**
     * Waits until the extender has read the member count of each pod's job from the job's own object (a training job's
     * replica specs): it follows those objects with informers that its readiness does not wait for, and a job of unknown
     * count is placed as the pods of it that exist.
     */
    static void awaitSizesKnown(Extender extender, List<Pod> pods) {
        for (var pod : pods) {
            var job = JobMembershipReader.read(pod, new ArrayList<>()).orElseThrow();
            Awaitility.await("the size of job " + job.key()).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                    .until(() -> extender.jobSizes().membersOf(job).isPresent());
        }
    }
}
