package io.hetgpu.extender.throughput;

import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;

/**
 * A pod that ended, read as a {@link WorkSample}: from what the cluster shows, no permission beyond reading pods.
 * <ul>
 * <li>the class: the pod's {@code hetgpu.io/workload} annotation;</li>
 * <li>the run time: its first container's terminated state, {@code startedAt} to {@code finishedAt};</li>
 * <li>the work: the line {@code hetgpu.io/work: <number>} the pod wrote to its termination message (kubelet copies
 *     {@code /dev/termination-log} into the container status): what it did; else, for a pod that Succeeded, its
 *     {@code hetgpu.io/work} annotation: the total it declared, done since it ran to its end.</li>
 * </ul>
 * A pod evicted (status reason {@code Evicted}, or a {@code DisruptionTarget} condition) counts only with a reported
 * figure: the declared total was not done. Any other pod that did not succeed is not a measurement (it may have
 * crashed at any point). Every refusal names the field and value; nothing here throws for what a pod holds.
 */
public final class PodRun {

    /** kubelet keeps at most 4096 bytes of a termination message; a longer text is not read further. */
    static final int MAX_MESSAGE_CHARS = 4096;

    private PodRun() {
    }

    /** What a pod's end gives: a sample, or why it is not one. */
    public sealed interface Outcome {
        record Run(WorkSample sample) implements Outcome {
        }

        record NotARun(String reason) implements Outcome {
        }
    }

    /**
     * @param cardModel the normalised model of the cards the pod held (its node's)
     * @param gpus      how many it held
     */
    public static Outcome of(Pod pod, String cardModel, int gpus) {
        var metadata = pod.getMetadata();
        Map<String, String> annotations = metadata == null || metadata.getAnnotations() == null ? Map.of() : metadata.getAnnotations();
        var workload = annotations.getOrDefault(HetgpuKeys.POD_WORKLOAD, "").strip();
        if (workload.isEmpty()) {
            return new Outcome.NotARun(HetgpuKeys.POD_WORKLOAD + ": none, no class to learn");
        }
        var status = pod.getStatus();
        if (status == null) {
            return new Outcome.NotARun("status: none");
        }
        boolean succeeded = "Succeeded".equals(status.getPhase());
        boolean evicted = evicted(pod);
        if (!succeeded && !evicted) {
            return new Outcome.NotARun("phase " + Quote.of(status.getPhase()) + ": only a pod that succeeded or was evicted is a measurement");
        }
        var terminated = firstContainerTerminated(pod);
        if (terminated == null) {
            return new Outcome.NotARun("containerStatuses[0].state.terminated: none");
        }
        var started = instant(terminated.getStartedAt());
        var finished = instant(terminated.getFinishedAt());
        if (started == null || finished == null) {
            return new Outcome.NotARun("containerStatuses[0].state.terminated: startedAt " + Quote.of(terminated.getStartedAt())
                    + ", finishedAt " + Quote.of(terminated.getFinishedAt()) + ": expected RFC 3339 times");
        }
        if (finished.isBefore(started)) {
            return new Outcome.NotARun("containerStatuses[0].state.terminated: finishedAt " + finished + " before startedAt " + started);
        }
        var reported = reportedWork(terminated.getMessage());
        if (reported instanceof Work.Bad bad) {
            return new Outcome.NotARun(bad.reason());
        }
        double work;
        if (reported instanceof Work.Figure figure) {
            work = figure.value();
        } else if (evicted) {
            return new Outcome.NotARun("evicted without a " + HetgpuKeys.TERMINATION_WORK_PREFIX
                    + " line in its termination message: the work it declared was not done");
        } else {
            var declared = annotations.get(HetgpuKeys.POD_WORK);
            if (declared == null) {
                return new Outcome.NotARun(HetgpuKeys.POD_WORK + ": none, and no " + HetgpuKeys.TERMINATION_WORK_PREFIX
                        + " line in its termination message");
            }
            var parsed = number(declared, HetgpuKeys.POD_WORK);
            if (parsed instanceof Work.Bad bad) {
                return new Outcome.NotARun(bad.reason());
            }
            work = ((Work.Figure) parsed).value();
        }
        var namespace = metadata.getNamespace() == null ? "default" : metadata.getNamespace();
        double seconds = Duration.between(started, finished).toMillis() / 1000.0;
        return new Outcome.Run(new WorkSample(workload, namespace, cardModel, gpus, seconds, work, finished));
    }

    /** Evicted by kubelet (status reason) or by the API (a preemption or eviction's DisruptionTarget condition). */
    static boolean evicted(Pod pod) {
        var status = pod.getStatus();
        if ("Evicted".equals(status.getReason())) {
            return true;
        }
        var conditions = status.getConditions() == null ? List.<io.fabric8.kubernetes.api.model.PodCondition>of() : status.getConditions();
        return conditions.stream().anyMatch(c -> "DisruptionTarget".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    /** The terminated state of the pod's first container (by the spec's order), or null. */
    private static ContainerStateTerminated firstContainerTerminated(Pod pod) {
        List<ContainerStatus> statuses = pod.getStatus().getContainerStatuses();
        if (statuses == null || statuses.isEmpty()) {
            return null;
        }
        var first = statuses.getFirst();
        if (pod.getSpec() != null && pod.getSpec().getContainers() != null && !pod.getSpec().getContainers().isEmpty()) {
            var name = pod.getSpec().getContainers().getFirst().getName();
            first = statuses.stream().filter(s -> name != null && name.equals(s.getName())).findFirst().orElse(first);
        }
        return first.getState() == null ? null : first.getState().getTerminated();
    }

    private static Instant instant(String text) {
        if (text == null) {
            return null;
        }
        try {
            return OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /** A work figure read from a pod, or why not, or none given. */
    sealed interface Work {
        record Figure(double value) implements Work {
        }

        record Bad(String reason) implements Work {
        }

        record None() implements Work {
        }
    }

    /** The last {@code hetgpu.io/work:} line of a termination message (the latest report wins), read within its bound. */
    static Work reportedWork(String message) {
        if (message == null || message.isEmpty()) {
            return new Work.None();
        }
        var text = message.length() > MAX_MESSAGE_CHARS ? message.substring(0, MAX_MESSAGE_CHARS) : message;
        String last = null;
        for (var line : text.split("\n", 256)) {
            var stripped = line.strip();
            if (stripped.startsWith(HetgpuKeys.TERMINATION_WORK_PREFIX)) {
                last = stripped.substring(HetgpuKeys.TERMINATION_WORK_PREFIX.length()).strip();
            }
        }
        return last == null ? new Work.None() : number(last, "termination message " + HetgpuKeys.TERMINATION_WORK_PREFIX);
    }

    static Work number(String text, String field) {
        var value = text.strip();
        // A plain decimal number: no hex, no NaN or Infinity, no suffix; bounded length before parsing.
        if (value.length() > 32 || !value.matches("[0-9]+(\\.[0-9]+)?([eE][+-]?[0-9]{1,3})?")) {
            return new Work.Bad(field + ": " + Quote.of(text) + " is not a number of work done (e.g. 125000)");
        }
        double parsed = Double.parseDouble(value);
        if (!(parsed > 0) || Double.isInfinite(parsed)) {
            return new Work.Bad(field + ": " + Quote.of(text) + ": expected above 0");
        }
        return new Work.Figure(parsed);
    }
}
