package io.hetgpu.extender.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.DataLocality;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.ScoreTable;
import io.hetgpu.extender.policy.PolicySettings;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class JobPlannerTest {

    private final JobPlanner planner = new JobPlanner(new PlacementPolicy(PolicySettings.DEFAULTS));

    private static PodRequest member(String job, String name, int gpus, int priority, String role, List<String> claims) {
        return new PodRequest("ml", name, "uid-" + name, gpus, Set.of(), 0, PodRequest.ANY_COMPUTE_CAPABILITY, false, priority,
                PriorityHint.UNSET, GpuPreference.UNSET, job, role, claims);
    }

    private static List<PodRequest> workers(String job, int pods, int gpus, int priority) {
        return IntStream.range(0, pods).mapToObj(i -> member(job, job + "-worker-" + i, gpus, priority, "worker", List.of())).toList();
    }

    private static JobPlanner.Job job(String key, List<PodRequest> members) {
        return new JobPlanner.Job(key, members, pod -> PlacementContext.EMPTY, pod -> ClosedTier.NONE);
    }

    private static NodeState v100x4(String name, String rack) {
        return TestNodes.placed(TestNodes.gpu(name, node -> TestTopologies.v100Pcie(node, 4)), rack, "zone-1");
    }

    @Test
    void twoFourGpuPodsOnTwoNodesOfFourFreeGetOneNodeEach() {
        var nodes = List.of(v100x4("n1", "r1"), v100x4("n2", "r1"));

        var outcome = planner.plan(job("ml/a", workers("a", 2, 4, 0)), nodes, JobPlanner.MemberFit.ANY);

        assertThat(outcome).isInstanceOf(JobPlanner.Planned.class);
        var seats = ((JobPlanner.Planned) outcome).seats();
        assertThat(seats).extracting(JobPlanner.Seat::nodeName).containsExactlyInAnyOrder("n1", "n2");
        assertThat(seats).allSatisfy(seat -> assertThat(seat.set().size()).isEqualTo(4));
    }

    @Test
    void whichOfTwoAlikePodsGetsWhichSeatIsSettledByTheirNamesNotTheOrderGiven() {
        var nodes = List.of(v100x4("n1", "r1"), v100x4("n2", "r2"));
        var inOrder = workers("a", 2, 4, 0);

        var given = (JobPlanner.Planned) planner.plan(job("ml/a", inOrder), nodes, JobPlanner.MemberFit.ANY);
        var reversed = (JobPlanner.Planned) planner.plan(job("ml/a", inOrder.reversed()), nodes, JobPlanner.MemberFit.ANY);

        assertThat(reversed.seatOf("a-worker-0").nodeName()).isEqualTo(given.seatOf("a-worker-0").nodeName());
        assertThat(reversed.seatOf("a-worker-1").nodeName()).isEqualTo(given.seatOf("a-worker-1").nodeName());
        assertThat(given.seatOf("a-worker-0").nodeName()).isNotEqualTo(given.seatOf("a-worker-1").nodeName());
    }

    @Test
    void aJobThatCannotBePlacedWholeSaysWhatItLacks() {
        // 8 GPUs free, 3 pods of 4 asked: two are planned, the third finds nothing.
        var nodes = List.of(v100x4("n1", "r1"), v100x4("n2", "r1"));

        var outcome = planner.plan(job("ml/resnet", workers("resnet", 3, 4, 0)), nodes, JobPlanner.MemberFit.ANY);

        assertThat(outcome).isInstanceOf(JobPlanner.Lacking.class);
        var lacking = (JobPlanner.Lacking) outcome;
        assertThat(lacking.need()).isEqualTo("job ml/resnet: 3 pods need 12 GPUs (3 × 4), 8 free in all, at most 4 on one node");
        assertThat(lacking.detail()).startsWith("2 planned, then pod resnet-worker-2 (4 GPUs) fits no node: 2 nodes:");
        assertThat(lacking.reason()).isEqualTo(lacking.need() + "; " + lacking.detail());
    }

    @Test
    void membersOfOneJobAreDrawnTogetherOnOneNodeWhenItHasRoom() {
        var nodes = List.of(TestNodes.placed(TestNodes.gpu("a", TestTopologies::dgxA100), "r1", "z"),
                TestNodes.placed(TestNodes.gpu("b", TestTopologies::dgxA100), "r2", "z"));

        var outcome = (JobPlanner.Planned) planner.plan(job("ml/j", workers("j", 4, 2, 0)), nodes, JobPlanner.MemberFit.ANY);

        assertThat(outcome.seats()).extracting(JobPlanner.Seat::nodeName).containsOnly(outcome.seats().getFirst().nodeName());
        long all = 0;
        for (var seat : outcome.seats()) {
            assertThat(all & seat.mask()).as("no GPU planned twice").isZero();
            all |= seat.mask();
        }
        assertThat(Long.bitCount(all)).isEqualTo(8);
    }

    @Test
    void aHighPriorityJobIsPlannedOnTheNewestCardsAndALowPriorityOneOnTheOldest() {
        var nodes = List.of(TestNodes.gpu("k80", TestTopologies::k80x4), TestNodes.gpu("h100", TestTopologies::dgxH100));

        var urgent = (JobPlanner.Planned) planner.plan(job("ml/u", workers("u", 2, 2, 1000)), nodes, JobPlanner.MemberFit.ANY);
        var background = (JobPlanner.Planned) planner.plan(job("ml/b", workers("b", 2, 2, -10)), nodes, JobPlanner.MemberFit.ANY);

        assertThat(urgent.seats()).extracting(JobPlanner.Seat::nodeName).containsOnly("h100");
        assertThat(background.seats()).extracting(JobPlanner.Seat::nodeName).containsOnly("k80");
    }

    @Test
    void theJobGoesToTheRackThatHoldsItsData() {
        var nodes = List.of(v100x4("a1", "rack-a"), v100x4("a2", "rack-a"), v100x4("b1", "rack-b"), v100x4("b2", "rack-b"));
        var data = new PlacementContext(List.of(), List.of(new DataLocality(Set.of(), Set.of("rack-b"), Set.of())));
        var members = IntStream.range(0, 2).mapToObj(i -> member("d", "d-" + i, 4, 0, "worker", List.of("data"))).toList();

        var outcome = (JobPlanner.Planned) planner.plan(new JobPlanner.Job("ml/d", members, pod -> data, pod -> ClosedTier.NONE),
                nodes, JobPlanner.MemberFit.ANY);

        assertThat(outcome.seats()).extracting(JobPlanner.Seat::nodeName).containsExactlyInAnyOrder("b1", "b2");
    }

    @Test
    void parameterServersFollowTheirWorkersAndStayOffGpuNodes() {
        var nodes = List.of(v100x4("g1", "rack-a"), TestNodes.placed(TestNodes.cpu("cpu-a"), "rack-a", "z"),
                v100x4("g2", "rack-b"), TestNodes.placed(TestNodes.cpu("cpu-b"), "rack-b", "z"));
        var members = new ArrayList<PodRequest>();
        members.add(member("tf", "tf-ps-0", 0, 0, "ps", List.of()));
        members.addAll(workers("tf", 1, 4, 0));

        var outcome = (JobPlanner.Planned) planner.plan(job("ml/tf", members), nodes, JobPlanner.MemberFit.ANY);

        var worker = outcome.seatOf("tf-worker-0");
        var ps = outcome.seatOf("tf-ps-0");
        assertThat(ps.nodeName()).startsWith("cpu-");
        assertThat(ps.node().rack()).isEqualTo(worker.node().rack());
    }

    @Test
    void kubeSchedulersOwnVerdictKeepsAMemberOffANodeAndIsNamedWhenNothingIsLeft() {
        var nodes = List.of(v100x4("n1", "r1"), v100x4("n2", "r1"));
        JobPlanner.MemberFit onlyN2 = (member, node, planned) -> node.equals("n2");

        var one = (JobPlanner.Planned) planner.plan(job("ml/o", workers("o", 1, 2, 0)), nodes, onlyN2);
        var two = planner.plan(job("ml/t", workers("t", 2, 4, 0)), nodes, onlyN2);

        assertThat(one.seats()).extracting(JobPlanner.Seat::nodeName).containsExactly("n2");
        assertThat(((JobPlanner.Lacking) two).reason()).contains("1 node: kube-scheduler's own filters refuse it there");
    }

    @Test
    void noPlanEverGivesAGpuTwiceOrATakenOne() {
        var random = new Random(7);
        for (int round = 0; round < 200; round++) {
            var nodes = new ArrayList<NodeState>();
            for (int n = 0; n < 4; n++) {
                int[] free = IntStream.range(0, 8).filter(position -> random.nextInt(3) > 0).toArray();
                nodes.add(TestNodes.placed(TestNodes.gpu("n" + n, TestTopologies::dgxA100, free), "r" + (n % 2), "z"));
            }
            var members = IntStream.range(0, 1 + random.nextInt(6))
                    .mapToObj(i -> member("x", "x-" + i, random.nextInt(5), 0, "worker", List.of())).toList();

            if (planner.plan(job("ml/x", members), nodes, JobPlanner.MemberFit.ANY) instanceof JobPlanner.Planned planned) {
                var taken = new HashMap<String, Long>();
                for (var seat : planned.seats()) {
                    var free = nodes.stream().filter(node -> node.name().equals(seat.nodeName())).findFirst().orElseThrow().freeMask();
                    assertThat(seat.mask() & ~free).as("only free GPUs are planned").isZero();
                    assertThat(seat.mask() & taken.getOrDefault(seat.nodeName(), 0L)).as("no GPU planned twice").isZero();
                    assertThat(seat.set().size()).isEqualTo(seat.member().gpuCount());
                    taken.merge(seat.nodeName(), seat.mask(), (a, b) -> a | b);
                }
                assertThat(planned.seats()).hasSize(members.size());
            }
        }
    }

    /**
     * The planner keeps each shape's fitting candidates from one member to the next and mends them where a seat changed a
     * node. Replayed seat by seat, every member was scored over exactly the nodes a fresh judgement of the nodes as the
     * seats before it left them finds fitting, with the same sets, in node order; and a verdict that judges every member
     * but refuses nothing plans the same, seat for seat and score for score.
     */
    @Test
    void candidatesMendedSeatBySeatAreThoseAFreshJudgementFinds() {
        var policy = new PlacementPolicy(PolicySettings.DEFAULTS);
        var everyNode = new JobPlanner.MemberFit() {
            @Override
            public boolean fits(PodRequest member, String node, List<JobPlanner.Seat> planned) {
                return true;
            }
        };
        var random = new Random(11);
        int planned = 0;
        for (int round = 0; round < 300; round++) {
            var nodes = new ArrayList<NodeState>();
            for (int n = 0; n < 3 + random.nextInt(10); n++) {
                int[] free = IntStream.range(0, 8).filter(position -> random.nextInt(3) > 0).toArray();
                var name = "n" + n;
                nodes.add(TestNodes.placed(random.nextBoolean() ? TestNodes.gpu(name, TestTopologies::dgxA100, free)
                        : TestNodes.gpu(name, node -> TestTopologies.v100Pcie(node, 4)), "r" + random.nextInt(3), "z" + random.nextInt(2)));
            }
            var members = IntStream.range(0, 1 + random.nextInt(8))
                    .mapToObj(i -> member("x", "x-" + i, random.nextInt(5), 1000 * random.nextInt(3), "worker", List.of())).toList();

            var mended = planner.plan(job("ml/x", members), nodes, JobPlanner.MemberFit.ANY);
            var judgedEach = planner.plan(job("ml/x", members), nodes, everyNode);

            if (!(mended instanceof JobPlanner.Planned plan)) {
                assertThat(judgedEach).isEqualTo(mended);
                continue;
            }
            planned++;
            var states = new ArrayList<>(nodes);
            for (var seat : plan.seats()) {
                var expected = states.stream()
                        .map(state -> policy.assess(seat.member(), state, ClosedTier.NONE))
                        .filter(PlacementPolicy.Fit.class::isInstance)
                        .map(fit -> ((PlacementPolicy.Fit) fit).candidate())
                        .map(candidate -> candidate.name() + "/" + candidate.set().positions())
                        .toList();
                // A seat keeps the summary of its member's scores: its best few candidates.
                var table = seat.scores();
                assertThat(IntStream.range(0, table.size()).mapToObj(i -> table.candidate(i).name() + "/" + table.candidate(i).set().positions()).toList())
                        .as("member %s's best candidates", seat.member().name()).isSubsetOf(expected)
                        .hasSize(Math.min(ScoreTable.EXPLAINED_ROWS, expected.size()));
                int at = IntStream.range(0, states.size()).filter(i -> states.get(i).name().equals(seat.nodeName())).findFirst().orElseThrow();
                states.set(at, states.get(at).withTaken(seat.mask()));
            }
            var other = (JobPlanner.Planned) judgedEach;
            for (int m = 0; m < plan.seats().size(); m++) {
                var one = plan.seats().get(m);
                var two = other.seats().get(m);
                assertThat(two.member().name() + "@" + two.nodeName() + "/" + two.mask()).isEqualTo(one.member().name() + "@" + one.nodeName() + "/" + one.mask());
                assertThat(IntStream.range(0, two.scores().size()).map(two.scores()::score).toArray())
                        .containsExactly(IntStream.range(0, one.scores().size()).map(one.scores()::score).toArray());
            }
        }
        assertThat(planned).as("rounds planned whole").isGreaterThan(100);
    }
}
