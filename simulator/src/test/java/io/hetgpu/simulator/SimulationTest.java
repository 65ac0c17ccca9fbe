package io.hetgpu.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.policy.HighPriorityReserve;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.kubescheduler.selection.TieBreak;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SimulationTest {

    private static final GavelThroughputs THROUGHPUTS = GavelThroughputs.shipped();
    private static final ClusterInventory GAVEL = ClusterInventory.gavel();

    private static Experiment gavel(int jobs, double rate, long seed) {
        return gavel(jobs, rate, seed, Job.LOW_PRIORITY);
    }

    private static Experiment gavel(int jobs, double rate, long seed, int otherPriority) {
        var racks = GAVEL.nodes().stream().map(SimNode::rack).distinct().sorted().toList();
        return new Experiment("gavel", GAVEL, GavelWorkload.generate(rate, jobs, seed, THROUGHPUTS, racks, otherPriority),
                CardSpeed.gavel(THROUGHPUTS, "K80"), THROUGHPUTS.asWorkloadTable());
    }

    @Test
    void everyJobFinishesAndNoGpuIsEverHeldByTwoJobsAtOnce() {
        // A busy trace (V100 reference: five times the work) so that GPUs are contended.
        var experiment = new Experiment("busy", GAVEL, gavel(600, 6, 3).jobs(), CardSpeed.gavel(THROUGHPUTS, "V100"), WorkloadThroughputs.NONE);
        var simulation = new Simulation(GAVEL, experiment.speed());
        for (var placer : experiment.placers(3)) {
            var result = simulation.run(experiment.jobs(), placer);
            assertThat(result.runs()).as(placer.name()).hasSize(600);
            assertThat(result.neverPlaced()).isZero();
            var byDevice = new HashMap<String, List<JobRun>>();
            for (var run : result.runs()) {
                assertThat(run.start()).isGreaterThanOrEqualTo(run.job().arrival());
                assertThat(run.models()).hasSize(run.job().gpus());
                for (var placement : run.placements()) {
                    for (int position : placement.set().positions()) {
                        byDevice.computeIfAbsent(placement.node() + "/" + position, k -> new ArrayList<>()).add(run);
                    }
                }
            }
            for (var runs : byDevice.values()) {
                runs.sort(Comparator.comparingDouble(JobRun::start));
                for (int i = 1; i < runs.size(); i++) {
                    assertThat(runs.get(i).start()).as(placer.name()).isGreaterThanOrEqualTo(runs.get(i - 1).end());
                }
            }
        }
    }

    @Test
    void whenGpusFreeUpTheHighPriorityJobGoesFirstEvenIfItCameLater() {
        var one = new ClusterInventory(List.of(GAVEL.nodes().get(0)));  // one k80-4x node
        var type = THROUGHPUTS.jobTypes().getFirst();
        var jobs = List.of(
                job(0, 0, false, type, 4, 3600),
                job(1, 10, false, type, 4, 3600),
                job(2, 20, true, type, 4, 3600));
        var experiment = new Experiment("tiny", one, jobs, CardSpeed.gavel(THROUGHPUTS, "K80"), WorkloadThroughputs.NONE);
        // Without preemption: the urgent job cannot evict the running one, and waits for it.
        for (var placer : List.of(KubernetesDefaultPlacer.nonPreemptive(1),
                new HetgpuPlacer("hetgpu", new PlacementPolicy(PolicySettings.DEFAULTS), false, TieBreak.random(new Random(1))))) {
            var runs = new Simulation(one, experiment.speed()).run(jobs, placer).runs();
            var starts = new HashMap<Integer, Double>();
            var ends = new HashMap<Integer, Double>();
            runs.forEach(run -> starts.put(run.job().id(), run.start()));
            runs.forEach(run -> ends.put(run.job().id(), run.end()));
            assertThat(starts.get(2)).as(placer.name()).isEqualTo(ends.get(0));
            assertThat(starts.get(1)).as(placer.name()).isGreaterThan(starts.get(2));
        }
    }

    @Test
    void theSameSeedGivesTheSameRun() {
        var first = gavel(300, 2.4, 7).run(7);
        var again = gavel(300, 2.4, 7).run(7);
        assertThat(again).isEqualTo(first);
        assertThat(gavel(300, 2.4, 8).run(8)).isNotEqualTo(first);
    }

    @Test
    void hetgpuBeatsTheDefaultOnHighPriorityCompletionTime() {
        // The other jobs without a PriorityClass: neutral to the shipped thresholds, so card tier serves urgent jobs only.
        var summaries = gavel(1500, 2.4, 1, Job.NORMAL_PRIORITY).run(1);
        var byName = new HashMap<String, Summary>();
        summaries.forEach(s -> byName.put(s.policy(), s));
        double baseline = byName.get("kubernetes-default").meanJctHigh();
        assertThat(byName.get("hetgpu").meanJctHigh()).isLessThan(baseline);
        // As shipped, hetgpu must not buy faster urgent jobs with slower jobs overall.
        assertThat(byName.get("hetgpu").meanJct()).isLessThanOrEqualTo(byName.get("kubernetes-default").meanJct());
        assertThat(byName.get("hetgpu-workload-aware").meanJctHigh()).isLessThan(baseline / 1.5);
        assertThat(byName.get("hetgpu-workload-aware").meanJct()).isLessThan(byName.get("kubernetes-default").meanJct());
        // High-priority jobs on hetgpu get the newest cards far more often than spreading gives them
        // (spreading by cpu and memory already favours the DGX-1 hosts, which are the larger machines).
        assertThat(byName.get("hetgpu").highOnTopTier()).isGreaterThan(byName.get("kubernetes-default").highOnTopTier() + 0.3);
    }

    @Test
    void aReserveLetsALateUrgentJobStartAtOnceWhereOrdinaryJobsWouldHaveTakenEveryTopTierCard() {
        var v100 = GAVEL.nodes().stream().filter(node -> node.name().equals("v100-0")).toList();
        var dgx = new ClusterInventory(v100);
        var type = THROUGHPUTS.jobTypes().getFirst();
        var jobs = List.of(job(0, 0, false, type, 4, 36_000), job(1, 10, false, type, 4, 36_000), job(2, 20, true, type, 4, 3600));
        var speed = CardSpeed.gavel(THROUGHPUTS, "V100");

        var without = starts(new Simulation(dgx, speed).run(jobs, reserving(0)));
        assertThat(without.get(2)).as("both ordinary jobs hold the 8 V100: the urgent one waits 10 h").isGreaterThanOrEqualTo(36_000.0);

        var with = starts(new Simulation(dgx, speed).run(jobs, reserving(4)));
        assertThat(with.get(2)).as("4 V100 kept free").isEqualTo(20.0);
        assertThat(with.get(1)).as("the second ordinary job waits for the first").isGreaterThanOrEqualTo(36_000.0);
    }

    /** Without preemption, which is what a reserve stands in for. */
    private static Placer reserving(int gpus) {
        var policy = new PlacementPolicy(PolicySettings.DEFAULTS.withReserve(new HighPriorityReserve(gpus)));
        return new HetgpuPlacer("reserve" + gpus, policy, false, TieBreak.random(new Random(1)));
    }

    private static Map<Integer, Double> starts(Simulation.Result result) {
        var starts = new HashMap<Integer, Double>();
        result.runs().forEach(run -> starts.put(run.job().id(), run.start()));
        return starts;
    }

    @Test
    void aPsWorkerJobKeepsItsWorkersTogetherUnderHetgpu() {
        var type = THROUGHPUTS.jobTypes().getFirst();
        var ps = new Job(0, 0, true, Job.HIGH_PRIORITY, type,
                List.of(new Job.Pod(0, "ps"), new Job.Pod(4, "worker"), new Job.Pod(4, "worker")), 3600, Set.of(), 0, 100, "rack-1");
        var experiment = new Experiment("ps", GAVEL, List.of(ps), CardSpeed.gavel(THROUGHPUTS, "K80"), WorkloadThroughputs.NONE);
        var hetgpu = experiment.placers(1).stream().filter(p -> p.name().equals("hetgpu")).findFirst().orElseThrow();
        var run = new Simulation(GAVEL, experiment.speed()).run(List.of(ps), hetgpu).runs().getFirst();
        var racks = run.placements().stream().map(p -> GAVEL.nodes().get(p.node()).rack()).distinct().toList();
        assertThat(racks).containsExactly("rack-1");
        assertThat(run.crossRackGb()).isZero();
        assertThat(run.models()).containsOnly("V100");
    }

    private static Job job(int id, double arrival, boolean high, String type, int gpus, double work) {
        return new Job(id, arrival, high, high ? Job.HIGH_PRIORITY : Job.LOW_PRIORITY, type, List.of(new Job.Pod(gpus, "")), work,
                Set.of(), 0, 0, "");
    }
}
