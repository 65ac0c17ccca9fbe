package io.hetgpu.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.hetgpu.extender.policy.JobHeadroom;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The simulation under kube-scheduler's DefaultPreemption, with and without hetgpu's preempt verb; every figure worked out by hand. */
class PreemptionSimulationTest {

    private static final ClusterInventory GAVEL = ClusterInventory.gavel();
    /** Four GPUs of a K80 server talk over PCIe. */
    private static final double PCIE = CommunicationModel.DEFAULTS.pcieSet();
    /** Every card equally fast, so that durations are the work over the communication factor. */
    private static final CardSpeed SAME_SPEED = (job, model) -> 1.0;
    /** Checkpoints every 10 minutes, 1 minute to restart. */
    private static final Checkpoints TEN_MINUTES = new Checkpoints(600, 60);

    private static ClusterInventory nodes(String... names) {
        var wanted = Set.of(names);
        return new ClusterInventory(GAVEL.nodes().stream().filter(node -> wanted.contains(node.name())).toList());
    }

    private static Job single(int id, double arrival, int priority, int gpus, double work) {
        return new Job(id, arrival, priority == Job.HIGH_PRIORITY, priority, "", List.of(new Job.Pod(gpus, "")), work, Set.of(), 0, 0, "");
    }

    private static Job psWorker(int id, double arrival, int priority, double work) {
        return new Job(id, arrival, priority == Job.HIGH_PRIORITY, priority, "",
                List.of(new Job.Pod(0, "ps"), new Job.Pod(4, "worker"), new Job.Pod(4, "worker")), work, Set.of(), 0, 50, "");
    }

    private static Map<Integer, JobRun> byJob(Simulation.Result result) {
        var runs = new HashMap<Integer, JobRun>();
        result.runs().forEach(run -> runs.put(run.job().id(), run));
        return runs;
    }

    @Test
    void anUrgentJobEvictsALowOneWhichResumesFromItsLastCheckpoint() {
        var k80 = nodes("k80-0");
        var jobs = List.of(single(0, 0, Job.LOW_PRIORITY, 4, 3600), single(1, 1000, Job.HIGH_PRIORITY, 4, 3600));

        var runs = byJob(new Simulation(k80, SAME_SPEED, TEN_MINUTES).run(jobs, new KubernetesDefaultPlacer(1)));

        // The urgent job starts on arrival. The low one had run 1,000 s: saved at 600 s (600 x 0.85 of its work), so
        // 400 s are lost; it waits for the urgent one, restarts in 60 s and does the rest of its work.
        double urgentEnd = 1000 + 3600 / PCIE;
        assertThat(runs.get(1).start()).isEqualTo(1000.0);
        assertThat(runs.get(1).end()).isCloseTo(urgentEnd, within(1e-6));
        var low = runs.get(0);
        double rest = (3600 - 600 * PCIE) / PCIE;
        assertThat(low.evictions()).isEqualTo(1);
        assertThat(low.start()).isCloseTo(urgentEnd, within(1e-6));
        assertThat(low.end()).isCloseTo(urgentEnd + 60 + rest, within(1e-6));
        assertThat(low.lostGpuHours()).isCloseTo(4 * (400 + 60) / 3600.0, within(1e-9));
        assertThat(low.gpuHours()).isCloseTo(4 * (1000 + 60 + rest) / 3600.0, within(1e-9));
    }

    @Test
    void withoutPreemptionTheUrgentJobWaits() {
        var k80 = nodes("k80-0");
        var jobs = List.of(single(0, 0, Job.LOW_PRIORITY, 4, 3600), single(1, 1000, Job.HIGH_PRIORITY, 4, 3600));

        var runs = byJob(new Simulation(k80, SAME_SPEED, TEN_MINUTES).run(jobs, KubernetesDefaultPlacer.nonPreemptive(1)));

        assertThat(runs.get(1).start()).isCloseTo(3600 / PCIE, within(1e-6));
        assertThat(runs.get(0).evictions()).isZero();
    }

    @Test
    void aJobNeverEvictsOneOfItsOwnPriority() {
        var k80 = nodes("k80-0");
        var jobs = List.of(single(0, 0, Job.HIGH_PRIORITY, 4, 3600), single(1, 1000, Job.HIGH_PRIORITY, 4, 3600));

        var runs = byJob(new Simulation(k80, SAME_SPEED, TEN_MINUTES).run(jobs, new KubernetesDefaultPlacer(1)));

        assertThat(runs.get(1).start()).isCloseTo(3600 / PCIE, within(1e-6));
        assertThat(runs.get(0).evictions()).isZero();
    }

    @Test
    void aPsWorkerJobThatLosesOneWorkerRestartsWhole() {
        var two = nodes("k80-0", "k80-1");
        var jobs = List.of(psWorker(0, 0, Job.LOW_PRIORITY, 7200), single(1, 1800, Job.HIGH_PRIORITY, 4, 3600));

        var runs = byJob(new Simulation(two, SAME_SPEED, TEN_MINUTES).run(jobs, new KubernetesDefaultPlacer(1)));

        // One worker's node is enough for the urgent job, but the low job cannot train on with one worker: all of it
        // stops, and it needs both nodes again, so it waits for the urgent job although 4 GPUs are free meanwhile.
        assertThat(runs.get(1).start()).isEqualTo(1800.0);
        var low = runs.get(0);
        assertThat(low.evictions()).isEqualTo(1);
        double urgentEnd = 1800 + 3600 / PCIE;
        assertThat(low.start()).isCloseTo(urgentEnd, within(1e-6));
        // Two nodes: 0.75 of NVLink speed (or 0.6 across racks). 1,800 s saved in full (three checkpoints).
        double factor = GAVEL.nodes().get(0).rack().equals(GAVEL.nodes().get(1).rack()) ? CommunicationModel.DEFAULTS.sameRack() : CommunicationModel.DEFAULTS.crossRack();
        double remaining = 7200 - 1800 * factor;
        assertThat(low.end()).isCloseTo(urgentEnd + 60 + remaining / factor, within(1e-6));
    }

    @Test
    void aWholeWorkloadOrAJobHetgpuPlansEvictsNothingWhenItStillCouldNotStart() {
        // A high ps/worker job needs two 4-GPU nodes: one holds a low job, the other a high one it cannot evict.
        var two = nodes("k80-0", "k80-1");
        var jobs = List.of(single(0, 0, Job.LOW_PRIORITY, 4, 7200), single(1, 10, Job.HIGH_PRIORITY, 4, 7200),
                psWorker(2, 100, Job.HIGH_PRIORITY, 3600));

        for (var placer : List.of(KubernetesDefaultPlacer.wholeWorkload(1), hetgpu())) {
            var runs = byJob(new Simulation(two, SAME_SPEED, TEN_MINUTES).run(jobs, placer));

            assertThat(runs.get(0).evictions()).as(placer.name() + ": the low job is not evicted for a gang that still cannot start").isZero();
            assertThat(runs.get(2).start()).as(placer.name()).isCloseTo(10 + 7200 / PCIE, within(1e-6));
        }
    }

    @Test
    void podByPodTheSameGangEvictsTheLowJobAndHoldsItsNodeHalfPlaced() {
        var two = nodes("k80-0", "k80-1");
        var jobs = List.of(single(0, 0, Job.LOW_PRIORITY, 4, 7200), single(1, 10, Job.HIGH_PRIORITY, 4, 7200),
                psWorker(2, 100, Job.HIGH_PRIORITY, 3600));

        var runs = byJob(new Simulation(two, SAME_SPEED, TEN_MINUTES).run(jobs, new KubernetesDefaultPlacer(1)));

        // kube-scheduler alone preempts for the first worker, which evicts the low job and takes its node; the second
        // waits for the high job to end, and until then the first holds 4 GPUs for nothing. The low job, evicted 90 s
        // into its run, saved nothing and restarts once the gang is done.
        double highEnd = 10 + 7200 / PCIE;
        var gang = runs.get(2);
        assertThat(runs.get(0).evictions()).isEqualTo(1);
        assertThat(gang.start()).isCloseTo(highEnd, within(1e-6));
        assertThat(gang.halfPlaced().gpuHours()).isCloseTo(4 * (highEnd - 100) / 3600, within(1e-9));
        assertThat(gang.halfPlaced().longestHoldingGpusHours()).isCloseTo((highEnd - 100) / 3600, within(1e-9));
        assertThat(runs.get(0).start()).isCloseTo(gang.end(), within(1e-6));
    }

    @Test
    void podByPodARestartedJobsFirstWorkerHoldsItsGpusWhileTheSecondWaits() {
        var two = nodes("k80-0", "k80-1");
        var jobs = List.of(psWorker(0, 0, Job.LOW_PRIORITY, 7200), single(1, 1800, Job.HIGH_PRIORITY, 4, 3600));

        var podByPod = byJob(new Simulation(two, SAME_SPEED, TEN_MINUTES).run(jobs, new KubernetesDefaultPlacer(1)));
        var whole = byJob(new Simulation(two, SAME_SPEED, TEN_MINUTES).run(jobs, KubernetesDefaultPlacer.wholeWorkload(1)));
        var planned = byJob(new Simulation(two, SAME_SPEED, TEN_MINUTES).run(jobs, hetgpu()));

        // The evicted job's pods come back at once. Pod by pod, one worker gets the node the urgent job left alone and
        // holds its 4 GPUs, idle, until the urgent job ends; admitted whole or planned whole, the job waits holding nothing.
        double urgentEnd = 1800 + 3600 / PCIE;
        assertThat(podByPod.get(0).halfPlaced().gpuHours()).isCloseTo(4 * (urgentEnd - 1800) / 3600, within(1e-9));
        assertThat(podByPod.get(0).halfPlaced().longestHoldingGpusHours()).isCloseTo((urgentEnd - 1800) / 3600, within(1e-9));
        for (var runs : List.of(podByPod, whole, planned)) {
            assertThat(runs.get(0).start()).isCloseTo(urgentEnd, within(1e-6));
            assertThat(runs.get(0).evictions()).isEqualTo(1);
        }
        assertThat(whole.get(0).halfPlaced()).isEqualTo(JobRun.HalfPlaced.NONE);
        assertThat(planned.get(0).halfPlaced()).isEqualTo(JobRun.HalfPlaced.NONE);
    }

    @Test
    void withJobHeadroomALowGangWaitsForSlackSoThatASmallJobAndAnUrgentOneStartWithoutEvictingIt() {
        var three = nodes("k80-0", "k80-1", "k80-2");
        var jobs = List.of(single(0, 0, Job.LOW_PRIORITY, 4, 3600), psWorker(1, 10, Job.LOW_PRIORITY, 3600),
                single(2, 20, Job.LOW_PRIORITY, 4, 3600), single(3, 30, Job.HIGH_PRIORITY, 4, 3600));
        var headroom = new HetgpuPlacer("hetgpu-headroom", new PlacementPolicy(PolicySettings.DEFAULTS.withJobHeadroom(new JobHeadroom(4))), false, 1);

        var without = byJob(new Simulation(three, SAME_SPEED, TEN_MINUTES).run(jobs, hetgpu()));
        var with = byJob(new Simulation(three, SAME_SPEED, TEN_MINUTES).run(jobs, headroom));

        // Without: the gang takes the last 8 free GPUs at once; the small job waits, the urgent one evicts.
        assertThat(without.get(1).start()).isEqualTo(10.0);
        assertThat(without.values().stream().mapToInt(JobRun::evictions).sum()).isPositive();
        // With 4 kept: 8 free, 8 needed, so the gang waits; the small job and the urgent one start on arrival, nothing is
        // evicted, and the gang starts once 12 GPUs are free again.
        assertThat(with.get(2).start()).isEqualTo(20.0);
        assertThat(with.get(3).start()).isEqualTo(30.0);
        assertThat(with.values().stream().mapToInt(JobRun::evictions).sum()).isZero();
        double lastEnd = List.of(0, 2, 3).stream().mapToDouble(id -> with.get(id).end()).max().orElseThrow();
        assertThat(with.get(1).start()).isCloseTo(lastEnd, within(1e-6));
    }

    private static HetgpuPlacer hetgpu() {
        return new HetgpuPlacer("hetgpu", new PlacementPolicy(PolicySettings.DEFAULTS), false, 1);
    }

    @Test
    void anUrgentGangsFirstWorkerEvictsWhereTheSecondCanFollow() {
        // Two DGX-1 in two racks. One runs a low 8-GPU job (A); the other a high 4-GPU job (B), which nothing evicts,
        // and a low 2-GPU one (C). An urgent ps/worker job (D) arrives.
        var two = nodes("v100-0", "v100-1");
        assertThat(two.nodes().get(0).rack()).isNotEqualTo(two.nodes().get(1).rack());
        double urgent = 3001;
        var jobs = List.of(single(0, 0, Job.LOW_PRIORITY, 8, 100_000), single(1, 1, Job.HIGH_PRIORITY, 4, 100_000),
                single(2, 2, Job.LOW_PRIORITY, 2, 100_000), psWorker(3, urgent, Job.HIGH_PRIORITY, 3600));

        var runs = byJob(new Simulation(two, SAME_SPEED, TEN_MINUTES).run(jobs, hetgpu()));

        // The extender's job rule takes victim jobs cheapest first: A saved 1 s ago (8 GPU-s lost), C 599 s ago (1,198).
        // A alone lets the whole job be planned, both workers on A's node (two pods on one node: 0.85 of the speed). C stays:
        // evicting it beside B would make room for one worker only.
        var gang = runs.get(3);
        assertThat(gang.start()).isEqualTo(urgent);
        var workerNodes = gang.placements().stream().filter(placement -> !placement.set().positions().isEmpty())
                .map(Placer.PodPlacement::node).distinct().toList();
        assertThat(workerNodes).as("both workers on one node").hasSize(1);
        assertThat(gang.end()).isCloseTo(urgent + 3600 / PCIE, within(1e-6));
        assertThat(runs.get(0).evictions()).isEqualTo(1);
        assertThat(runs.get(2).evictions()).isZero();
    }

    @Test
    void hetgpusPreemptVerbCountsAVictimPodOfAJobAsItsWholeJobsLostWork() {
        var three = nodes("k80-0", "k80-1", "k80-2");
        // W's two workers take two K80 servers at 0; L the third at 500. At 1,000 an urgent 4-GPU pod must evict one of them.
        var jobs = List.of(psWorker(0, 0, Job.LOW_PRIORITY, 100_000), single(1, 500, Job.LOW_PRIORITY, 4, 100_000),
                single(2, 1000, Job.HIGH_PRIORITY, 4, 3600));

        var runs = byJob(new Simulation(three, SAME_SPEED, TEN_MINUTES).run(jobs, hetgpu()));

        // A worker of W saved at 600: 4 GPUs x 400 s = 1,600 GPU-seconds, but W restarts whole, losing 3,200. L saved
        // nothing yet: 4 x 500 = 2,000. Counted by pod, a worker of W looked cheapest.
        assertThat(runs.get(1).evictions()).isEqualTo(1);
        assertThat(runs.get(0).evictions()).isZero();
        assertThat(runs.get(2).start()).isEqualTo(1000.0);
    }

    @Test
    void hetgpusPreemptVerbFreesTheNewestCardsWhereKubeSchedulerEvictsTheLatestStarted() {
        var mixed = nodes("k80-0", "v100-4");
        // The low job on the V100s started first; kube-scheduler's last rule evicts the latest-started victims (the K80's).
        var jobs = List.of(single(0, 0, Job.LOW_PRIORITY, 4, 36_000), single(1, 10, Job.LOW_PRIORITY, 4, 36_000),
                single(2, 600, Job.HIGH_PRIORITY, 4, 3600));
        var lows = List.of(jobs.get(0), jobs.get(1));

        var kube = byJob(new Simulation(mixed, SAME_SPEED, TEN_MINUTES).run(jobs, new KubernetesDefaultPlacer(1)));
        var hetgpu = byJob(new Simulation(mixed, SAME_SPEED, TEN_MINUTES).run(jobs,
                new HetgpuPlacer("hetgpu", new PlacementPolicy(PolicySettings.DEFAULTS), false, 1)));

        assertThat(kube.get(2).models()).as("kube-scheduler").allMatch(model -> model.contains("K80"));
        assertThat(hetgpu.get(2).models()).as("hetgpu").allMatch(model -> model.contains("V100"));
        assertThat(lows.stream().mapToInt(job -> hetgpu.get(job.id()).evictions()).sum()).isEqualTo(1);
    }
}
