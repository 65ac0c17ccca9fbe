package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.DataLocality;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PeerLocation;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.WaitingPeer;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The scorers other than the tier one, each on candidates the policy itself produced. */
class ScorersTest {

    private static final PlacementPolicy POLICY = new PlacementPolicy(PolicySettings.DEFAULTS);

    private final NodeState h100 = TestNodes.gpu("h100", TestTopologies::dgxH100);

    @Test
    void nvlinkScorerRanksTheSetsNodesWouldGive() {
        var pod = TestPods.gpus(2);
        var pcie = TestNodes.gpu("t4", TestTopologies::t4x4);
        var split = TestNodes.gpu("v100-split", TestTopologies::dgx1V100, 0, 5);
        // H100 pair over 18 NVLinks (1800) is the best; the T4 pair behind one switch scores 50; 0 and 5 cross the CPUs (10).
        assertThat(score(new NvlinkScorer(), pod, h100, pcie, split)).containsExactly(1.0, 0.0278, 0.0056);
        assertThat(score(new NvlinkScorer(), TestPods.gpus(1), h100, pcie)).containsExactly(0.0, 0.0);
    }

    @Test
    void jobLocalityPrefersThePeersNodeThenRackThenZone() {
        var same = TestNodes.placed(TestNodes.gpu("n1", TestTopologies::t4x4), "r1", "z1");
        var rack = TestNodes.placed(TestNodes.gpu("n2", TestTopologies::t4x4), "r1", "z1");
        var zone = TestNodes.placed(TestNodes.gpu("n3", TestTopologies::t4x4), "r2", "z1");
        var far = TestNodes.placed(TestNodes.gpu("n4", TestTopologies::t4x4), "r9", "z9");
        var context = new PlacementContext(List.of(new PeerLocation("ps-0", "n1", "r1", "z1")), List.of());
        assertThat(score(new JobLocalityScorer(), TestPods.gpus(1), context, same, rack, zone, far))
                .containsExactly(1.0, 0.6, 0.3, 0.0);
    }

    @Test
    void theFirstWorkerOfAGangGoesWhereTheSecondCanFollow() {
        // An 8-GPU ps/worker job: the ps runs on a CPU node of r1, the second 4-GPU worker still waits.
        var alone = TestNodes.placed(TestNodes.gpu("alone", TestTopologies::dgx1V100, 0, 1, 2, 3), "r1", "z1");
        var roomy = TestNodes.placed(TestNodes.gpu("roomy", TestTopologies::dgx1V100), "r2", "z2");
        var psAndWorker = new PlacementContext(List.of(new PeerLocation("ps-0", "cpu-1", "r1", "z1")), List.of(),
                List.of(new WaitingPeer("worker-1", 4)));
        // alone: the ps's rack (0.6) and no room (0), mean 0.3; roomy: another zone (0) and room for the worker (1), 0.5.
        assertThat(score(new JobLocalityScorer(), TestPods.gpus(4), psAndWorker, alone, roomy)).containsExactly(0.3, 0.5);

        // The ps itself, placed first with both workers waiting: the node that holds both is on the node of all of them.
        var both = new PlacementContext(List.of(), List.of(), List.of(new WaitingPeer("worker-0", 4), new WaitingPeer("worker-1", 4)));
        assertThat(score(new JobLocalityScorer(), PodRequest.gpus("ps-0", 0), both, alone, roomy)).containsExactly(0.5, 1.0);
    }

    @Test
    void aJobsClosenessReadsAsAPlaceOrAMeanThatSaysHowWaitingPodsCount() {
        assertThat(Proximity.describeJob(0.6)).isEqualTo("same rack");
        assertThat(Proximity.describeJob(0.5)).isEqualTo("closeness 0.50 (node 1, rack 0.6, zone 0.3; a pod still waiting 1 where it fits)");
    }

    @Test
    void aWaitingPodWithoutGpusTellsNoNodeFromAnother() {
        var small = TestNodes.gpu("small", TestTopologies::t4x4, 0);
        var large = TestNodes.gpu("large", TestTopologies::t4x4);
        var psWaits = new PlacementContext(List.of(), List.of(), List.of(new WaitingPeer("ps-0", 0)));
        assertThat(score(new JobLocalityScorer(), TestPods.gpus(1), psWaits, small, large)).containsExactly(0.0, 0.0);
    }

    @Test
    void dataLocalityPrefersTheVolumesNodeThenRackThenZone() {
        var n1 = TestNodes.placed(TestNodes.cpu("n1"), "r1", "z1");
        var n2 = TestNodes.placed(TestNodes.cpu("n2"), "r2", "z1");
        var n3 = TestNodes.placed(TestNodes.cpu("n3"), "r3", "z2");
        var context = new PlacementContext(List.of(), List.of(new DataLocality(Set.of(), Set.of("r2"), Set.of("z1"))));
        assertThat(score(new DataLocalityScorer(), PodRequest.gpus("p", 0), context, n1, n2, n3)).containsExactly(0.3, 0.6, 0.0);
    }

    @Test
    void cpuPodsPreferCpuNodes() {
        assertThat(score(new CpuNodeScorer(), PodRequest.gpus("p", 0), TestNodes.cpu("c"), h100)).containsExactly(1.0, 0.0);
        assertThat(score(new CpuNodeScorer(), TestPods.gpus(1), h100)).containsExactly(0.0);
    }

    @Test
    void packingPrefersTheNodeLeftFullestOnceThePodHasItsGpus() {
        var empty = TestNodes.gpu("v100-empty", TestTopologies::dgx1V100);
        var busy = TestNodes.gpu("v100-busy", TestTopologies::dgx1V100, 0, 5);
        var t4 = TestNodes.gpu("t4", TestTopologies::t4x4);
        var busyT4 = TestNodes.gpu("t4-busy", TestTopologies::t4x4, 1, 2);
        // Taken once the pod has one GPU: V100s 1 of 8 and 7 of 8, T4s 1 of 4 and 3 of 4. Each tier's fullest scores 1,
        // its emptiest 0, so the T4s never count against the V100s.
        assertThat(score(new PackingScorer(), TestPods.gpus(1), empty, busy, t4, busyT4)).containsExactly(0.0, 1.0, 0.0, 1.0);
        var partly = TestNodes.gpu("v100-half", TestTopologies::dgx1V100, 0, 1, 2, 3);
        // 5 of 8 taken lies two thirds of the way from 1 of 8 to 7 of 8.
        assertThat(score(new PackingScorer(), TestPods.gpus(1), empty, partly, busy)).containsExactly(0.0, 0.6667, 1.0);
    }

    @Test
    void packingNeverTradesABetterLinkedSetOrCloserNodeForAFullerOne() {
        // The busy DGX-1 has only GPUs 0 and 5 free, joined across the CPUs; the empty one gives an NVLink pair.
        var empty = TestNodes.gpu("v100-empty", TestTopologies::dgx1V100);
        var split = TestNodes.gpu("v100-split", TestTopologies::dgx1V100, 0, 5);
        assertThat(score(new PackingScorer(), TestPods.gpus(2), empty, split)).containsExactly(1.0, 1.0);

        // A worker whose job's other pod is in rack r1: the empty node beside it is not given up for a fuller one far away.
        var beside = TestNodes.placed(TestNodes.gpu("near", TestTopologies::dgx1V100), "r1", "z1");
        var far = TestNodes.placed(TestNodes.gpu("far", TestTopologies::dgx1V100, 0, 1, 2, 3), "r2", "z1");
        var alsoFar = TestNodes.placed(TestNodes.gpu("also-far", TestTopologies::dgx1V100), "r2", "z1");
        var context = new PlacementContext(List.of(new PeerLocation("ps-0", "other", "r1", "z1")), List.of());
        assertThat(score(new PackingScorer(), TestPods.gpus(4), context, beside, far, alsoFar)).containsExactly(1.0, 1.0, 0.0);
    }

    @Test
    void packingSaysNothingForPodsWithoutGpusOrNodesLeftAlike() {
        assertThat(score(new PackingScorer(), PodRequest.gpus("p", 0), TestNodes.cpu("c"), h100)).containsExactly(0.0, 0.0);
        var twin = TestNodes.gpu("h100-b", TestTopologies::dgxH100);
        assertThat(score(new PackingScorer(), TestPods.gpus(1), h100, twin)).containsExactly(1.0, 1.0);
    }

    /**
     * Many groups (closeness to the job and to the data set apart): each candidate scores by the fullest and emptiest of
     * the candidates alike to it, as a plain grouping of all of them says, however many groups there are.
     */
    @Test
    void packingRanksEachCandidateWithinItsOwnGroupHoweverManyGroupsThereAre() {
        var random = new java.util.Random(5);
        var pod = TestPods.gpus(1);
        var candidates = new java.util.ArrayList<Candidate>();
        for (int i = 0; i < 400; i++) {
            int[] free = java.util.stream.IntStream.range(0, 8).filter(position -> random.nextInt(3) > 0).toArray();
            if (free.length == 0) {
                continue;
            }
            var node = random.nextBoolean() ? TestNodes.gpu("a" + i, TestTopologies::dgxA100, free)
                    : TestNodes.gpu("h" + i, TestTopologies::dgxH100, free);
            candidates.add(((PlacementPolicy.Fit) PolicyAnswers.assess(POLICY, pod, node)).candidate());
        }
        var toJob = candidates.stream().mapToDouble(candidate -> random.nextInt(40) / 40.0).toArray();
        var toData = candidates.stream().mapToDouble(candidate -> random.nextInt(3) / 2.0).toArray();
        java.util.Map<String, double[]> earlier = java.util.Map.of("job", toJob, "data", toData);

        var scores = new PackingScorer().score(pod, candidates, PlacementContext.EMPTY, earlier::get);

        for (int i = 0; i < candidates.size(); i++) {
            double high = Double.NEGATIVE_INFINITY;
            double low = Double.POSITIVE_INFINITY;
            for (int j = 0; j < candidates.size(); j++) {
                var x = candidates.get(i);
                var y = candidates.get(j);
                if (x.tierRank() == y.tierRank() && x.linkScore() == y.linkScore() && toJob[i] == toJob[j] && toData[i] == toData[j]) {
                    high = Math.max(high, y.takenAfter());
                    low = Math.min(low, y.takenAfter());
                }
            }
            double expected = high == low ? 1 : (candidates.get(i).takenAfter() - low) / (high - low);
            assertThat(scores[i]).as("candidate %d", i).isEqualTo(expected);
        }
    }

    static double[] score(NodeScorer scorer, PodRequest pod, NodeState... nodes) {
        return score(scorer, pod, PlacementContext.EMPTY, nodes);
    }

    static double[] score(NodeScorer scorer, PodRequest pod, PlacementContext context, NodeState... nodes) {
        var candidates = java.util.Arrays.stream(nodes)
                .map(node -> ((PlacementPolicy.Fit) PolicyAnswers.assess(POLICY, pod, node)).candidate())
                .toList();
        var scores = scorer.score(pod, candidates, context);
        for (int i = 0; i < scores.length; i++) {
            scores[i] = Math.round(scores[i] * 10000) / 10000.0;
        }
        return scores;
    }
}
