package io.hetgpu.testcluster.explain;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.hetgpu.extender.ExtenderSetup;
import io.hetgpu.extender.trust.RecordTrust;
import io.hetgpu.extender.trust.UntrustedRecords;
import io.hetgpu.extender.cluster.ListedClusterView;
import io.hetgpu.extender.cluster.ListedJobSizes;
import io.hetgpu.extender.job.JobHolds;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.extender.explain.PodSpeeds;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.kubescheduler.selection.TieBreak;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.PriorityAdmission;
import io.hetgpu.testcluster.scheduler.Attempt;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One explain: the cluster as read, with the given workloads' pods created in it as the API server would create them,
 * copied into memory; then one round of the scheduler driver over the copy, kube-scheduler's own filters, scores, host
 * selection and preemption with hetgpu's extender called in process, configured as deployed. Each pod's decision is
 * the one the test cluster's scheduler would make on a cluster in that state, with the extender's own reasons and
 * scores; nothing is written to the cluster.
 *
 * <p>In a cluster that serves DRA, its objects are copied too ({@link CopyDra}): a pod's claims are made from their
 * templates as the resourceclaim controller would make them, and allocated at the filter as kube-scheduler's
 * DynamicResources plugin allocates them, so a DRA pod is explained with the devices its claims would get.
 *
 * <p>Every pending pod of the scheduler takes part, in kube-scheduler's queue order, as they would in the cluster: a pod
 * waiting there since before may take GPUs the new ones would otherwise get. Where kube-scheduler breaks a tie at random,
 * explain takes the first node by name and says which nodes tied.
 */
final class ExplainRun {

    /** Ties broken by name order, the first node offered: explain names the others. */
    static final TieBreak FIRST_BY_NAME = seen -> false;
    /** Where kube-scheduler's preemption starts its walk over candidates; any seed is as good as kube-scheduler's own. */
    private static final long PREEMPTION_SEED = 1;
    private static final DeviceAssignmentCodec ASSIGNMENTS = new DeviceAssignmentCodec();

    private final ExtenderSetup base;
    private final DeployedConfiguration configuration;

    ExplainRun(DeployedConfiguration configuration) {
        this.configuration = configuration;
        var extender = ExtenderSetup.of(configuration.extender());
        // The cluster's records are signed with its extenders' key, which explain does not read: they count for nothing
        // here (bound pods' devices are predicted), without a warning per pod; the records its own binds write count.
        this.base = new ExtenderSetup(extender.config(), extender.catalog(), extender.parser(), extender.nodeStates(), extender.policy(),
                RecordTrust.ownKey(Set.copyOf(configuration.extender().schedulerNames()), UntrustedRecords.countedOnly(UntrustedRecords.DEFAULT_MEMORY)));
    }

    /**
     * @param asked pods of the cluster to explain, as namespace/name
     * @throws WorkloadFiles.BadInput when a pod asked about is not in the cluster
     */
    ExplainReport explain(ClusterReading reading, Workloads workloads, List<String> asked, String clusterLabel, String configurationLabel)
            throws WorkloadFiles.BadInput {
        // DRA's objects in the copy: pods' claims read from them by the extender as by its informers, allocated in the round.
        var dra = new CopyDra(concat(reading.dra().slices(), workloads.dra().slices()), concat(reading.dra().claims(), workloads.dra().claims()),
                concat(reading.dra().templates(), workloads.dra().templates()), concat(reading.dra().classes(), workloads.dra().classes()),
                base.catalog());
        var setup = dra.inUse() ? base.withDra(dra) : base;
        // What the cluster's extender has learned, so that a pod naming its class is ranked as the extender ranks it.
        setup.learner().ifPresent(learner -> learner.restore(reading.learned()));
        var admission = new PriorityAdmission(concat(reading.priorityClasses(), workloads.priorityClasses()));
        var explained = new LinkedHashMap<String, String>();
        var outcomes = new LinkedHashMap<String, PodExplanation>();
        var created = new ArrayList<Pod>();
        long version = nextVersion(reading.pods());
        var now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        for (var given : workloads.pods()) {
            var pod = asCreated(given.pod(), now, version++);
            var key = key(pod);
            explained.put(key, given.workload());
            switch (admission.admit(pod)) {
                case PriorityAdmission.Admitted admitted -> created.add(admitted.pod());
                case PriorityAdmission.Refused refused -> outcomes.put(key, alone(pod, given.workload(), new PodExplanation.Refused(refused.reason())));
            }
        }
        // The resourceclaim controller's part: claims made from templates for the pods to place and those pending.
        created.replaceAll(dra::withClaimsMade);
        var replaced = new HashSet<String>();
        created.forEach(pod -> replaced.add(key(pod)));
        var listed = reading.pods().stream().filter(pod -> !replaced.contains(key(pod))).map(dra::withClaimsMade).toList();
        for (var name : asked) {
            if (listed.stream().noneMatch(pod -> key(pod).equals(name))) {
                throw new WorkloadFiles.BadInput("pod " + name + " not found in the cluster");
            }
            explained.putIfAbsent(name, "Pod");
        }
        var copy = new ListedClusterView(reading.nodes(), concat(listed, created), concat(reading.volumes(), workloads.volumes()),
                concat(reading.claims(), workloads.claims()), dra.listed(), setup.parser(), configuration.extender().rackLabel(), setup.trust());
        dra.tell(copy);
        var budgets = concat(reading.budgets(), workloads.budgets());
        copy.useBudgets(budgets);
        var sizes = reading.sizes().with(workloads.created());
        var scored = new ConcurrentHashMap<String, ScoreTable>();
        var seated = ConcurrentHashMap.<String>newKeySet();
        var verbs = setup.verbs(copy, (pod, table) -> scored.put(pod.uid(), table), advice -> { }, new CopyBinder(copy), report -> { },
                sizes, planListener(seated));
        var extenders = configuration.scheduler().extenders().stream().map(entry -> new InProcessExtender(entry, verbs)).toList();
        var driver = new SchedulerDriver(new CopyTarget(copy, budgets, dra), configuration.scheduler(),
                extenders, FIRST_BY_NAME).preempting(PREEMPTION_SEED, FIRST_BY_NAME);
        var attempts = new LinkedHashMap<String, Attempt>();
        driver.attemptRound(attempt -> attempts.put(key(attempt.pod()), attempt));
        var notes = new ArrayList<String>(concat(reading.notes(), workloads.notes()));
        long earlier = attempts.keySet().stream().takeWhile(key -> !explained.containsKey(key)).count();
        if (earlier > 0) {
            notes.add(earlier + (earlier == 1 ? " pod" : " pods") + " already pending in the cluster came first in kube-scheduler's queue "
                    + "and were tried first");
        }
        var pods = new ArrayList<PodExplanation>();
        // Queue order first, as kube-scheduler took them; the pods it never tried after.
        attempts.forEach((key, attempt) -> {
            if (explained.containsKey(key)) {
                pods.add(explain(setup, dra, attempt, explained.get(key), copy, verbs, sizes, scored, seated));
            }
        });
        explained.forEach((key, workload) -> {
            if (outcomes.containsKey(key)) {
                pods.add(outcomes.get(key));
            } else if (!attempts.containsKey(key)) {
                var pod = copy.pod(key.substring(0, key.indexOf('/')), key.substring(key.indexOf('/') + 1));
                pods.add(alone(pod, workload, untried(pod)));
            }
        });
        return new ExplainReport(clusterLabel, configurationLabel, configuration.scheduler().schedulerName(), weightOf(),
                reading.nodes().size(), notes, pods);
    }

    private PodExplanation explain(ExtenderSetup setup, CopyDra dra, Attempt attempt, String workload, ListedClusterView copy,
                                   ExtenderVerbs verbs, ListedJobSizes sizes,
                                   Map<String, ScoreTable> scored, Set<String> seated) {
        var pod = attempt.pod();
        var uid = pod.getMetadata().getUid();
        var job = jobOf(pod, sizes, verbs);
        var refusals = Rankings.refusals(attempt.refused(), attempt.unresolvable());
        var table = scored.get(uid);
        return switch (attempt.decision()) {
            case Decision.Bound bound -> {
                var now = copy.pod(pod.getMetadata().getNamespace(), pod.getMetadata().getName());
                // A DRA pod's devices are its claims' allocation, a device-plugin pod's the bind's record.
                var claimed = now == null ? List.<String>of() : dra.devicesOf(now);
                var devices = claimed.isEmpty() ? devices(now, bound.node()) : claimed;
                var cards = GpuCards.of(setup, copy, bound.node(), devices);
                boolean plan = seated.contains(uid);
                var speeds = PodSpeeds.of(workloadClass(pod), setup.policy().throughputs().current());
                var ranking = plan && table != null ? Rankings.planned(table, speeds) : Rankings.scored(bound, weightOf(), table, speeds);
                var shown = plan ? Rankings.withUnseated(refusals, ranking, copy.nodeObjects().stream().map(node -> node.getMetadata().getName()).toList())
                        : refusals;
                yield new PodExplanation(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), workload, job,
                        new PodExplanation.Placed(bound.node(), devices, cards, Rankings.tiedWith(bound), plan), ranking, shown, List.of());
            }
            case Decision.Nominated nominated -> new PodExplanation(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), workload, job,
                    new PodExplanation.Nominated(nominated.node(), nominated.victims()), List.of(), refusals, changes(setup, pod, job, attempt, copy));
            case Decision.Unschedulable unschedulable -> new PodExplanation(pod.getMetadata().getNamespace(), pod.getMetadata().getName(),
                    workload, job, new PodExplanation.Pending(unschedulable.message()), List.of(), refusals, changes(setup, pod, job, attempt, copy));
            case Decision.Failed failed -> new PodExplanation(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), workload, job,
                    new PodExplanation.Failed(failed.error()), List.of(), refusals, List.of());
        };
    }

    /** The pod's {@code hetgpu.io/workload}, "" for none. */
    private static String workloadClass(Pod pod) {
        var annotations = pod.getMetadata().getAnnotations();
        return annotations == null ? "" : annotations.getOrDefault(HetgpuKeys.POD_WORKLOAD, "");
    }

    /** What would have to change: GPUs of the pod's class, and what preemption found, or the job's reason for a job's pod. */
    private List<String> changes(ExtenderSetup setup, Pod pod, PodExplanation.JobPart job, Attempt attempt, ListedClusterView copy) {
        var lines = new ArrayList<String>();
        if (job != null && job.whole()) {
            lines.add("its job " + job.key() + " is placed whole or not at all: all its pods must fit at once (the reason above says what it lacks)");
        } else {
            try {
                lines.addAll(Shortfall.of(setup.parser().parse(pod), setup, copy));
            } catch (InvalidPodRequestException e) {
                lines.add("the pod itself must be fixed: " + e.getMessage());
            }
        }
        switch (attempt.decision()) {
            case Decision.Nominated nominated -> lines.add("preemption would evict " + String.join(", ", nominated.victims()) + " on "
                    + nominated.node() + ", and the pod would then go there");
            default -> {
                if (!attempt.preemption().isEmpty()) {
                    lines.add("preemption evicts nothing for it: " + attempt.preemption());
                }
            }
        }
        return lines;
    }

    private PodExplanation.JobPart jobOf(Pod pod, ListedJobSizes sizes, ExtenderVerbs verbs) {
        var membership = JobMembershipReader.read(pod, new ArrayList<>());
        if (membership.isEmpty()) {
            return null;
        }
        var job = membership.get();
        var members = sizes.membersOf(job);
        return new PodExplanation.JobPart(job.key(), members.orElse(-1), sizes.whyUnknown(job).orElse(""), verbs.service().jobs().inJob(pod));
    }

    /** The devices the bind verb recorded for the pod on that node, in the container's order; none where it recorded none. */
    private static List<String> devices(Pod pod, String node) {
        var annotations = pod == null ? null : pod.getMetadata().getAnnotations();
        var record = annotations == null ? null : annotations.get(HetgpuKeys.POD_GPU_DEVICES);
        if (record == null) {
            return List.of();
        }
        try {
            var assignment = ASSIGNMENTS.decode(record);
            return assignment.node().equals(node) ? assignment.devices() : List.of();
        } catch (InventoryFormatException e) {
            return List.of();
        }
    }

    private long weightOf() {
        return configuration.scheduler().extenders().isEmpty() ? 1 : configuration.scheduler().extenders().getFirst().weight();
    }

    /** Why kube-scheduler never tried a pod this round: bound already, or addressed to another scheduler. */
    private PodExplanation.Outcome untried(Pod pod) {
        var node = pod.getSpec().getNodeName();
        if (node != null && !node.isEmpty()) {
            return new PodExplanation.AlreadyBound(node);
        }
        var schedulerName = Objects.requireNonNullElse(pod.getSpec().getSchedulerName(), "default-scheduler");
        if (!schedulerName.equals(configuration.scheduler().schedulerName())) {
            return new PodExplanation.NotForHetgpu(schedulerName);
        }
        return new PodExplanation.Failed("the pod has ended (" + pod.getStatus().getPhase() + ")");
    }

    private static PodExplanation alone(Pod pod, String workload, PodExplanation.Outcome outcome) {
        return new PodExplanation(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), workload, null, outcome, List.of(), List.of(),
                List.of());
    }

    /** Tells which pods a job's plan gave a seat: kube-scheduler then scores nothing for them, and their scores are the plan's. */
    private static JobHolds.Listener planListener(Set<String> seated) {
        return new JobHolds.Listener() {
            @Override
            public void held(JobHolds.HeldPlan plan) {
                plan.holds().forEach(hold -> seated.add(hold.podUid()));
            }

            @Override
            public void ended(JobHolds.HeldPlan plan, JobHolds.Ending ending, String why) {
            }
        };
    }

    /**
     * The pod as the API server stores it on creation: a UID, the creation time (to the second, as a real API server writes
     * it) and a resourceVersion after every listed one, so that kube-scheduler's queue takes it after the pods already
     * waiting and the given pods in the order given.
     */
    private static Pod asCreated(Pod pod, String now, long version) {
        var key = key(pod);
        var uid = pod.getMetadata().getUid() == null || pod.getMetadata().getUid().isEmpty()
                ? UUID.nameUUIDFromBytes(key.getBytes(StandardCharsets.UTF_8)).toString() : pod.getMetadata().getUid();
        return new PodBuilder(pod).editMetadata().withUid(uid).withCreationTimestamp(now).withResourceVersion(Long.toString(version)).endMetadata()
                .editOrNewStatus().withPhase("Pending").endStatus().build();
    }

    private static long nextVersion(List<Pod> pods) {
        long highest = 0;
        for (var pod : pods) {
            var version = pod.getMetadata().getResourceVersion();
            if (version != null && !version.isEmpty() && version.length() <= 18 && version.chars().allMatch(Character::isDigit)) {
                highest = Math.max(highest, Long.parseLong(version));
            }
        }
        return highest + 1;
    }

    static String key(Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }

    private static <T> List<T> concat(List<? extends T> first, List<? extends T> second) {
        var all = new ArrayList<T>(first);
        all.addAll(second);
        return all;
    }
}
