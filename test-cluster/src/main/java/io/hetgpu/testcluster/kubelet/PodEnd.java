package io.hetgpu.testcluster.kubelet;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A training pod's end as kubelet reports it once its job exits 0: phase Succeeded, Ready false, each container
 * terminated ({@code Completed}, exit code 0) from {@code startedAt} to {@code finishedAt}, and the first container's
 * termination message the line the job writes to {@code /dev/termination-log} at exit, {@code hetgpu.io/work: N}.
 *
 * <p>Time is compressed: the run lasts as long as the pod's declared work takes at its cards' speed in a
 * {@link SpeedTable} (40 minutes, say), and ends now: {@code finishedAt} is the moment it is written and
 * {@code startedAt} that long before, so a test sees hours of runs in a second and never sleeps.
 *
 * @param workloadClass the pod's {@code hetgpu.io/workload}
 * @param cardModel     the card that set the pace (the slowest of its GPUs)
 * @param gpus          GPUs it held
 * @param work          the work it did: its declared {@code hetgpu.io/work}, all of it
 * @param startedAt     the start of the run, in whole seconds as the API server writes times
 * @param finishedAt    its end, in whole seconds
 */
public record PodEnd(String workloadClass, String cardModel, int gpus, double work, Instant startedAt, Instant finishedAt) {

    /** What a pod's end would be, or why the simulated job cannot end by the table. */
    public sealed interface Outcome {
        record Ends(PodEnd end) implements Outcome {
        }

        record CannotEnd(String reason) implements Outcome {
        }
    }

    /**
     * The end of {@code pod}'s run on GPUs of {@code cardModels} (one per GPU it holds), finishing at {@code now}: its
     * class ({@code hetgpu.io/workload}) and declared work ({@code hetgpu.io/work}) read from its annotations, its run
     * time from {@code speeds}. Pure; a pod that names no class or work, or a class or card the table lacks, gets the
     * reason, naming the field and the value.
     */
    public static Outcome of(Pod pod, List<String> cardModels, SpeedTable speeds, Instant now) {
        Map<String, String> annotations = pod.getMetadata() == null || pod.getMetadata().getAnnotations() == null ? Map.of()
                : pod.getMetadata().getAnnotations();
        var workload = WorkloadThroughputs.className(annotations.getOrDefault(HetgpuKeys.POD_WORKLOAD, ""));
        if (workload.isEmpty()) {
            return new Outcome.CannotEnd(HetgpuKeys.POD_WORKLOAD + ": none, the speed table needs the pod's class");
        }
        var declared = annotations.get(HetgpuKeys.POD_WORK);
        if (declared == null) {
            return new Outcome.CannotEnd(HetgpuKeys.POD_WORK + ": none, the run time is the pod's declared work over its speed");
        }
        double work;
        try {
            work = Double.parseDouble(declared.strip());
        } catch (NumberFormatException e) {
            return new Outcome.CannotEnd(HetgpuKeys.POD_WORK + ": " + Quote.of(declared) + " is not a number");
        }
        return switch (speeds.runTime(workload, cardModels, work)) {
            case SpeedTable.RunTime.Unknown unknown -> new Outcome.CannotEnd(unknown.reason());
            case SpeedTable.RunTime.Known known -> {
                var finished = now.truncatedTo(ChronoUnit.SECONDS);
                yield new Outcome.Ends(new PodEnd(workload, known.cardModel(), cardModels.size(), work,
                        finished.minus(known.duration()), finished));
            }
        };
    }

    /** How long the run took. */
    public Duration run() {
        return Duration.between(startedAt, finishedAt);
    }

    /** The job's line at exit: {@code hetgpu.io/work: 48000}, the figure written plainly (no exponent, no ".0"). */
    public String terminationMessage() {
        return HetgpuKeys.TERMINATION_WORK_PREFIX + " " + BigDecimal.valueOf(work).stripTrailingZeros().toPlainString() + "\n";
    }

    /** {@code pod} with the status kubelet writes at this end; the rest of the pod as it was. */
    public Pod applyTo(Pod pod) {
        var containers = pod.getSpec() == null || pod.getSpec().getContainers() == null ? List.<String>of()
                : pod.getSpec().getContainers().stream().map(c -> c.getName()).toList();
        var statuses = new ArrayList<ContainerStatus>();
        for (int i = 0; i < containers.size(); i++) {
            // The job is the first container: it wrote the termination message; any other merely stopped with it.
            var terminated = new ContainerStatusBuilder().withName(containers.get(i)).withReady(false).withRestartCount(0)
                    .withStarted(false).withNewState().withNewTerminated().withExitCode(0).withReason("Completed")
                    .withStartedAt(startedAt.toString()).withFinishedAt(finishedAt.toString());
            statuses.add((i == 0 ? terminated.withMessage(terminationMessage()) : terminated).endTerminated().endState().build());
        }
        var conditions = new ArrayList<PodCondition>();
        if (pod.getStatus() != null && pod.getStatus().getConditions() != null) {
            pod.getStatus().getConditions().stream().filter(c -> !"Ready".equals(c.getType())).forEach(conditions::add);
        }
        conditions.add(new PodConditionBuilder().withType("Ready").withStatus("False").withReason("PodCompleted")
                .withLastTransitionTime(finishedAt.toString()).build());
        return new PodBuilder(pod).editOrNewStatus().withPhase("Succeeded").withConditions(conditions)
                .withContainerStatuses(statuses).endStatus().build();
    }
}
