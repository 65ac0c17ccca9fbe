package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.throughput.WorkSample;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;

/**
 * Stands in for the throughput package's own Pod to WorkSample reader until it is merged: the class from
 * {@code hetgpu.io/workload}, the run from the first container's terminated state, the work from its termination message
 * line {@code hetgpu.io/work: N} or, for a pod that succeeded, the annotation {@code hetgpu.io/work}.
 */
final class InterimPodRuns implements ThroughputLearning.RunReader {

    static final String WORK = "hetgpu.io/work";

    @Override
    public ThroughputLearning.Reading read(Pod pod, String cardModel, int gpus) {
        var annotations = pod.getMetadata().getAnnotations();
        var workload = annotations == null ? null : annotations.get(HetgpuKeys.POD_WORKLOAD);
        if (workload == null || workload.isBlank()) {
            return new ThroughputLearning.Reading.NoClass();
        }
        var statuses = pod.getStatus().getContainerStatuses();
        if (statuses == null || statuses.isEmpty() || statuses.getFirst().getState() == null
                || statuses.getFirst().getState().getTerminated() == null) {
            return new ThroughputLearning.Reading.NotMeasured("run time: the first container has no terminated state");
        }
        var terminated = statuses.getFirst().getState().getTerminated();
        Instant started;
        Instant finished;
        try {
            started = Instant.parse(terminated.getStartedAt());
            finished = Instant.parse(terminated.getFinishedAt());
        } catch (DateTimeParseException | NullPointerException e) {
            return new ThroughputLearning.Reading.NotMeasured("run time: startedAt " + Quote.of(terminated.getStartedAt())
                    + ", finishedAt " + Quote.of(terminated.getFinishedAt()));
        }
        Double work = null;
        var message = terminated.getMessage();
        if (message != null) {
            for (var line : message.lines().limit(64).toList()) {
                if (line.strip().startsWith(WORK + ":")) {
                    work = number(line.strip().substring(WORK.length() + 1).strip());
                }
            }
        }
        boolean succeeded = "Succeeded".equals(pod.getStatus().getPhase());
        if (work == null && succeeded && annotations.get(WORK) != null) {
            work = number(annotations.get(WORK).strip());
        }
        if (work == null) {
            return new ThroughputLearning.Reading.NotMeasured(succeeded ? "work: neither reported nor declared"
                    : "failed: a failed pod that reported no work is not a measurement");
        }
        return new ThroughputLearning.Reading.Run(new WorkSample(workload, pod.getMetadata().getNamespace(), cardModel, gpus,
                Duration.between(started, finished).toMillis() / 1000.0, work, finished));
    }

    private static Double number(String text) {
        try {
            return Double.parseDouble(text);
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }
}
