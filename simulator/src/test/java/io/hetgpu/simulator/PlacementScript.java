package io.hetgpu.simulator;

import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * A run of pods through a small cluster in steps, played by the simulator's placers: each step deletes
 * the pods of the jobs that finished, creates the pods of the jobs that arrive, then tries every pending
 * pod once in kube-scheduler's queue order, as {@link SchedulerDriver#scheduleRound()} does. A job
 * finishes a number of steps after its last pod was placed. The steps and the outcome of every attempt
 * are recorded, so the test cluster can replay the very same creations and deletions. With a placer that
 * plans jobs whole ({@link Admission.Planned}), a job of several pods is planned at its first pending pod's
 * turn, as the extender plans it at that pod's filter: each member is then bound to its seat at its own
 * turn (the extender steers it there), or every member is refused.
 */
final class PlacementScript {

    /** One pod of the run; pods are named in creation order ({@code p0007}), which is also their queue order among equals. */
    record ScriptPod(String name, Job job, int index) {
        Job.Pod pod() {
            return job.pods().get(index);
        }
    }

    record Step(List<String> deletions, List<ScriptPod> creations) {
    }

    /** What one scheduling attempt came to: a node and its devices, or none ("" and no devices). */
    record Outcome(int step, String pod, String node, List<String> devices) {
        @Override
        public String toString() {
            return "step " + step + " " + pod + " -> " + (node.isEmpty() ? "unschedulable" : node + " " + devices);
        }
    }

    private final List<Step> steps = new ArrayList<>();
    private final Map<String, ScriptPod> pods = new HashMap<>();
    private final List<Outcome> outcomes = new ArrayList<>();
    /** Jobs of several pods planned whole: placed, and refused (counted once a job, at its first refusal). */
    private int jobsPlaced;
    private final java.util.Set<Job> jobsRefused = new java.util.HashSet<>();

    List<Step> steps() {
        return steps;
    }

    List<Outcome> outcomes() {
        return outcomes;
    }

    ScriptPod pod(String name) {
        return pods.get(name);
    }

    int jobsPlacedWhole() {
        return jobsPlaced;
    }

    int jobsRefusedWhole() {
        return jobsRefused.size();
    }

    /**
     * @param racks           where training data may live
     * @param jobs            jobs to submit, 2.5 a step on average
     * @param cardConstraints whether some pods name a card or a least GPU memory (hetgpu annotations, which
     *                        kube-scheduler alone does not read)
     * @param wideJobs        whether some ps/worker jobs need every 8-GPU node at once: only for a placer that plans jobs
     *                        whole, as pod by pod two of them could each hold part of those nodes and wait for ever
     */
    static PlacementScript play(ClusterInventory inventory, Placer placer, List<String> racks, int jobs, boolean cardConstraints,
                                boolean wideJobs, long seed) {
        var script = new PlacementScript();
        var random = new Random(seed);
        var cluster = new ClusterState(inventory);
        var pending = new ArrayList<ScriptPod>();
        var placed = new LinkedHashMap<String, Placer.PodPlacement>();
        var podsOf = new HashMap<Job, List<ScriptPod>>();
        var lifetime = new HashMap<Job, Integer>();
        var finishing = new HashMap<Integer, List<Job>>();
        int created = 0;
        int submitted = 0;
        for (int step = 0; submitted < jobs || !placed.isEmpty(); step++) {
            if (step > 20 * jobs) {
                throw new IllegalStateException("the run does not drain: jobs partly placed wait for each other");
            }
            var deletions = new ArrayList<String>();
            for (var job : finishing.getOrDefault(step, List.of())) {
                for (var pod : podsOf.remove(job)) {
                    var placement = placed.remove(pod.name());
                    cluster.give(placement.node(), placement.mask(), job.priority());
                    deletions.add(pod.name());
                }
            }
            var creations = new ArrayList<ScriptPod>();
            for (int n = random.nextInt(6); n > 0 && submitted < jobs; n--) {
                var job = job(submitted++, step, random, racks, cardConstraints, wideJobs);
                lifetime.put(job, 1 + random.nextInt(6));
                var pods = new ArrayList<ScriptPod>();
                for (int i = 0; i < job.pods().size(); i++) {
                    pods.add(new ScriptPod("p%04d".formatted(created++), job, i));
                }
                podsOf.put(job, pods);
                creations.addAll(pods);
            }
            pending.addAll(creations);
            creations.forEach(pod -> script.pods.put(pod.name(), pod));
            script.steps.add(new Step(deletions, creations));
            pending.sort(Comparator.comparingInt((ScriptPod p) -> -p.job().priority()).thenComparing(ScriptPod::name));
            var planned = new HashMap<Job, List<Placer.PodPlacement>>();
            for (var pod : List.copyOf(pending)) {
                if (placer.admission() instanceof Admission.Planned whole && pod.job().distributed()) {
                    // A job refused is planned again at each member's turn, as each member asks the extender.
                    var seats = planned.containsKey(pod.job()) ? planned.get(pod.job()) : whole.jobs().plan(pod.job(), cluster);
                    if (seats == null) {
                        script.outcomes.add(new Outcome(step, pod.name(), "", List.of()));
                        script.jobsRefused.add(pod.job());
                        continue;
                    }
                    if (!planned.containsKey(pod.job())) {
                        planned.put(pod.job(), seats);
                        script.jobsPlaced++;
                        // The plan's GPUs are held for the whole job from now on, whichever member is bound first.
                        seats.forEach(seat -> cluster.take(seat.node(), seat.mask(), pod.job().priority()));
                    }
                    var placement = seats.get(pod.index());
                    placed.put(pod.name(), placement);
                    pending.remove(pod);
                    recordBound(script, inventory, step, pod, placement);
                    if (podsOf.get(pod.job()).stream().allMatch(p -> placed.containsKey(p.name()))) {
                        finishing.computeIfAbsent(step + lifetime.get(pod.job()), s -> new ArrayList<>()).add(pod.job());
                    }
                    continue;
                }
                var earlier = new ArrayList<Placer.PodPlacement>();
                podsOf.get(pod.job()).stream().filter(p -> p != pod && placed.containsKey(p.name()))
                        .forEach(p -> earlier.add(placed.get(p.name())));
                var placement = placer.place(pod.job(), pod.index(), earlier, cluster);
                if (placement == null) {
                    script.outcomes.add(new Outcome(step, pod.name(), "", List.of()));
                    continue;
                }
                cluster.take(placement.node(), placement.mask(), pod.job().priority());
                placed.put(pod.name(), placement);
                pending.remove(pod);
                recordBound(script, inventory, step, pod, placement);
                if (podsOf.get(pod.job()).stream().allMatch(p -> placed.containsKey(p.name()))) {
                    finishing.computeIfAbsent(step + lifetime.get(pod.job()), s -> new ArrayList<>()).add(pod.job());
                }
            }
        }
        return script;
    }

    private static void recordBound(PlacementScript script, ClusterInventory inventory, int step, ScriptPod pod, Placer.PodPlacement placement) {
        var node = inventory.nodes().get(placement.node());
        script.outcomes.add(new Outcome(step, pod.name(), node.name(),
                placement.set().positions().stream().map(p -> node.gpus().topology().device(p).uuid()).sorted().toList()));
    }

    /**
     * A job of the mix: mostly single pods of 1/2/4/8 GPUs (70/10/15/5 %), some ps/worker jobs (a ps
     * without GPUs and two workers, or with {@code wideJobs} sometimes three of 8 GPUs; data in a rack), some CPU-only pods, and some that name a card or a
     * least GPU memory; priorities high (1000), neutral (0) and low (-100).
     */
    private static Job job(int id, int step, Random random, List<String> racks, boolean cardConstraints, boolean wideJobs) {
        int priority = switch (random.nextInt(4)) {
            case 0 -> Job.HIGH_PRIORITY;
            case 1 -> -100;
            default -> Job.LOW_PRIORITY;
        };
        double kind = random.nextDouble();
        if (kind < 0.08) {
            return new Job(id, step, false, 0, "", List.of(new Job.Pod(0, "")), 0, Set.of(), 0, 0, "");
        }
        if (kind < 0.23) {
            int gpus = random.nextBoolean() ? 2 : 4;
            var workers = wideJobs && random.nextInt(4) == 0 ? 3 : 2;
            // A wide job's three workers of 8 GPUs need the cluster's three 8-GPU nodes at once: it is often refused whole.
            var pods = new ArrayList<>(List.of(new Job.Pod(0, "ps")));
            for (int w = 0; w < workers; w++) {
                pods.add(new Job.Pod(workers == 3 ? 8 : gpus, "worker"));
            }
            return new Job(id, step, priority == Job.HIGH_PRIORITY, priority, "", pods, 0, Set.of(), 0, 0, racks.get(random.nextInt(racks.size())));
        }
        if (kind < 0.33 && cardConstraints) {
            int gpus = 1 + random.nextInt(2);
            return switch (random.nextInt(3)) {
                case 0 -> new Job(id, step, priority == Job.HIGH_PRIORITY, priority, "", List.of(new Job.Pod(gpus, "")), 0,
                        Set.of("A100"), 0, 0, "");
                case 1 -> new Job(id, step, priority == Job.HIGH_PRIORITY, priority, "", List.of(new Job.Pod(gpus, "")), 0,
                        Set.of("T4"), 0, 0, "");
                default -> new Job(id, step, priority == Job.HIGH_PRIORITY, priority, "", List.of(new Job.Pod(gpus, "")), 0,
                        Set.of(), 32 * 1024, 0, "");
            };
        }
        double size = random.nextDouble();
        int gpus = size < 0.7 ? 1 : size < 0.8 ? 2 : size < 0.95 ? 4 : 8;
        return new Job(id, step, priority == Job.HIGH_PRIORITY, priority, "", List.of(new Job.Pod(gpus, "")), 0, Set.of(), 0, 0, "");
    }
}
