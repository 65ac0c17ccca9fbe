package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Two 4-GPU servers, 6 GPUs free: which jobs of several pods, and which pods of several GPUs, start now and which wait for room. */
class JobHeadroomTest {

    private final List<NodeState> nodes = List.of(TestNodes.gpu("n1", TestTopologies::k80x4, 0, 1, 2, 3),
            TestNodes.gpu("n2", TestTopologies::k80x4, 2, 3));

    private static List<PodRequest> job(int pods, int gpusEach, int priority) {
        var member = TestPods.priority(TestPods.gpus(gpusEach), priority, PriorityHint.UNSET, GpuPreference.UNSET);
        return java.util.Collections.nCopies(pods, member);
    }

    private static String heldBack(int headroom, List<PodRequest> members, List<NodeState> nodes) {
        return new JobHeadroom(headroom).heldBack("ml/resnet", members, nodes, PriorityThresholds.DEFAULTS);
    }

    @Test
    void aJobBelowHighPriorityWaitsUnlessTheHeadroomStaysFreeAfterIt() {
        // 6 free: 2 pods of 1 GPU leave 4, 2 pods of 2 GPUs leave 2.
        assertThat(heldBack(4, job(2, 1, 0), nodes)).isEmpty();
        assertThat(heldBack(4, job(2, 2, 0), nodes))
                .isEqualTo("job ml/resnet: 2 pods need 4 GPUs, 6 free in all; a job below high priority starts once 4 more than it "
                        + "needs are free (policy.jobHeadroom 4, room kept for urgent pods); no GPU is held for it");
        assertThat(heldBack(4, job(2, 2, -1), nodes)).contains("policy.jobHeadroom 4");
    }

    @Test
    void aLowPriorityJobThatWritesHighWaitsForRoomUnlessItsNamespaceIsTrusted() {
        var member = TestPods.priority(TestPods.gpus(2), -100, PriorityHint.HIGH, GpuPreference.UNSET);
        var members = List.of(member, member);

        assertThat(heldBack(4, members, nodes)).contains("policy.jobHeadroom 4")
                .endsWith("; hetgpu.io/priority: high ignored, spec.priority -100 gives low (only a trusted namespace may raise it)");
        assertThat(new JobHeadroom(4).heldBack("default/resnet", members, nodes, new PriorityThresholds(1000, -1, java.util.Set.of("default"))))
                .isEmpty();
    }

    @Test
    void anUrgentJobAJobWithoutGpusAndEveryJobWhenOffStartWhereverTheyFit() {
        assertThat(heldBack(4, job(2, 2, 1000), nodes)).as("urgent: preempts instead of waiting").isEmpty();
        assertThat(heldBack(4, job(3, 0, 0), nodes)).as("parameter servers alone take no GPU").isEmpty();
        assertThat(heldBack(0, job(2, 3, 0), nodes)).isEmpty();
        assertThat(JobHeadroom.NONE.isOn()).isFalse();
    }

    @Test
    void aNegativeHeadroomIsRefusedNamingTheSettingAndItsValue() {
        assertThatThrownBy(() -> new JobHeadroom(-2)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("jobHeadroom: expected a number of GPUs, 0 (off) or more, got -2");
    }

    @Test
    void theConfigurationFileSetsItUnderPolicyAndABadValueIsNamedWithItsPath() throws Exception {
        assertThat(ExtenderConfig.parse("version: v1\npolicy: {jobHeadroom: 8}", "c.yaml").policy().jobHeadroom()).isEqualTo(new JobHeadroom(8));
        assertThat(ExtenderConfig.parse("version: v1", "c.yaml").policy().jobHeadroom()).as("as shipped").isEqualTo(ExtenderConfig.DEFAULT_JOB_HEADROOM);
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {jobHeadroom: -2}", "c.yaml"))
                .hasMessage("c.yaml: policy.jobHeadroom: expected a number of GPUs, 0 (off) or more, got -2");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {jobHeadroom: lots}", "c.yaml"))
                .hasMessage("c.yaml: policy.jobHeadroom: expected a number of GPUs (8) or a share of the cluster's GPUs (10%), got \"lots\"");
        assertThat(ExtenderConfig.parse("version: v1\npolicy: {jobHeadroom: 12.5%}", "c.yaml").policy().jobHeadroom())
                .isEqualTo(JobHeadroom.percent(12.5));
        assertThat(ExtenderConfig.parse("version: v1\npolicy: {jobHeadroom: 0}", "c.yaml").policy().jobHeadroom().isOn()).isFalse();
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {jobHeadroom: 80%}", "c.yaml"))
                .hasMessage("c.yaml: policy.jobHeadroom: expected a share of the cluster's GPUs from 0% to 50%, got 80.0%");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {jobHeadroom: 8 GPUs}", "c.yaml"))
                .hasMessageContaining("got \"8 GPUs\"");
    }

    @Test
    void aShareOfTheClusterKeepsRoomInProportionRoundedUp() {
        var tenPercent = JobHeadroom.percent(10);
        assertThat(tenPercent.room(108, 8)).as("the simulator's Gavel cluster").isEqualTo(11);
        assertThat(tenPercent.room(16, 4)).as("the demo's cluster").isEqualTo(2);
        assertThat(tenPercent.room(8, 2)).isEqualTo(1);
        assertThat(tenPercent.room(10_000, 64)).isEqualTo(1_000);
        assertThat(new JobHeadroom(3, 10).room(16, 4)).as("the larger of the two").isEqualTo(3);
        assertThat(tenPercent).hasToString("10%");
        assertThat(new JobHeadroom(8)).hasToString("8");
    }

    @Test
    void aJobAsLargeAsTheClusterStartsOnceTheClusterIsFreeRatherThanNever() {
        // 8 GPUs in all, 6 free. With 4 GPUs of room, a job of 6 could never start: room is capped at the 2 beyond it.
        assertThat(heldBack(4, job(3, 2, 0), nodes)).contains("starts once 2 more than it needs are free");
        var all = List.of(TestNodes.gpu("n1", TestTopologies::k80x4, 0, 1, 2, 3), TestNodes.gpu("n2", TestTopologies::k80x4, 0, 1, 2, 3));
        assertThat(heldBack(4, job(4, 2, 0), all)).as("the whole cluster, free").isEmpty();
        assertThat(heldBack(4, job(3, 2, 0), all)).as("2 left over of 8").isEmpty();
        assertThat(JobHeadroom.percent(25).heldBack("ml/resnet", job(2, 2, 0), nodes, PriorityThresholds.DEFAULTS))
                .as("25 % of 8 GPUs is 2; 6 free leave 2").isEmpty();
        assertThat(JobHeadroom.percent(40).heldBack("ml/resnet", job(2, 2, 0), nodes, PriorityThresholds.DEFAULTS))
                .isEqualTo("job ml/resnet: 2 pods need 4 GPUs, 6 free in all; a job below high priority starts once 4 more than it "
                        + "needs are free (policy.jobHeadroom 40%, room kept for urgent pods); no GPU is held for it");
    }

    @Test
    void thePolicyAsksItsOwnHeadroomWithItsOwnThresholds() {
        var policy = new PlacementPolicy(PolicySettings.DEFAULTS.withJobHeadroom(new JobHeadroom(4))
                .withThresholds(new PriorityThresholds(100, -1)));
        assertThat(policy.heldBackForHeadroom("ml/resnet", job(2, 2, 100), nodes)).as("high by these thresholds").isEmpty();
        assertThat(policy.heldBackForHeadroom("ml/resnet", job(2, 2, 99), nodes)).contains("policy.jobHeadroom 4");
        assertThat(new PlacementPolicy(PolicySettings.DEFAULTS).heldBackForHeadroom("ml/resnet", job(2, 3, 0), nodes)).isEmpty();
    }

    private static PodRequest lone(int gpus, int priority) {
        return TestPods.priority(TestPods.gpus(gpus), priority, PriorityHint.UNSET, GpuPreference.UNSET);
    }

    @Test
    void aPodOfSeveralGpusInNoJobWaitsForTheRoomWhileSmallerPodsWaitForThreeRoomsWorth() {
        var headroom = new JobHeadroom(4);
        var sixFree = ClusterGpus.of(nodes);
        assertThat(sixFree).isEqualTo(new ClusterGpus(8, 6, 0));
        var backlog = sixFree.withSmallerWaiting(12);
        // 6 free: a pod of 2 leaves 4, a pod of 3 leaves 3.
        assertThat(headroom.heldBack(lone(2, 0), backlog, PriorityThresholds.DEFAULTS)).isEmpty();
        assertThat(headroom.heldBack(lone(3, -1), backlog, PriorityThresholds.DEFAULTS))
                .isEqualTo("it needs 3 GPUs, 6 free in all, and pods of fewer GPUs wait for 12; a pod of several GPUs below high priority "
                        + "starts once 4 more than it needs are free, or once the smaller pods waiting need fewer than 12 (policy.jobHeadroom 4, "
                        + "room kept for urgent pods and a backlog of smaller work)");
        assertThat(headroom.heldBack(lone(6, 0), backlog, PriorityThresholds.DEFAULTS))
                .as("room capped at what the cluster has beyond the pod").contains("starts once 2 more than it needs are free");
    }

    @Test
    void withLessSmallerWorkWaitingThanThreeRoomsAPodOfSeveralGpusStartsIntoWhateverIsFree() {
        var headroom = new JobHeadroom(4);
        var threeFree = new ClusterGpus(8, 3);
        assertThat(headroom.heldBack(lone(3, 0), threeFree, PriorityThresholds.DEFAULTS)).as("nothing waits").isEmpty();
        assertThat(headroom.heldBack(lone(3, 0), threeFree.withSmallerWaiting(11), PriorityThresholds.DEFAULTS)).as("less than 3 x 4").isEmpty();
        assertThat(headroom.heldBack(lone(3, 0), threeFree.withSmallerWaiting(12), PriorityThresholds.DEFAULTS)).contains("wait for 12");
        assertThat(headroom.heldBack(lone(8, 0), new ClusterGpus(8, 0, 64), PriorityThresholds.DEFAULTS))
                .as("as large as the cluster: no room to keep beyond it").isEmpty();
    }

    @Test
    void aPodOfOneGpuAnUrgentPodAJobsMemberAndEveryPodWhenOffAreNotKeptWaitingOnTheirOwn() {
        var headroom = new JobHeadroom(4);
        var oneFree = new ClusterGpus(8, 1, 12);
        assertThat(headroom.concerns(lone(1, 0), PriorityThresholds.DEFAULTS)).as("the small work the room lets through").isFalse();
        assertThat(headroom.heldBack(lone(4, 1000), oneFree, PriorityThresholds.DEFAULTS)).as("urgent: preempts instead").isEmpty();
        var member = TestPods.job(lone(4, 0), "ml/resnet");
        assertThat(headroom.concerns(member, PriorityThresholds.DEFAULTS)).as("its job's plan weighs it with its peers").isFalse();
        assertThat(JobHeadroom.NONE.heldBack(lone(4, 0), oneFree, PriorityThresholds.DEFAULTS)).isEmpty();
        var lowWritingHigh = TestPods.priority(TestPods.gpus(4), -100, PriorityHint.HIGH, GpuPreference.UNSET);
        assertThat(headroom.heldBack(lowWritingHigh, oneFree, PriorityThresholds.DEFAULTS))
                .endsWith("; hetgpu.io/priority: high ignored, spec.priority -100 gives low (only a trusted namespace may raise it)");
    }

    @Test
    void thePolicyClosesEveryCardToAPodThatWaitsForRoomUnknownModelsIncluded() {
        var policy = new PlacementPolicy(PolicySettings.DEFAULTS.withJobHeadroom(new JobHeadroom(4)));
        var pod = lone(3, 0);
        var closed = policy.heldForRoom(pod, new ClusterGpus(8, 6, 12));
        assertThat(closed.closesEveryCard()).isTrue();
        var unknown = TestNodes.allocatableOnly("u1", 4);
        var assessments = policy.assessAll(pod, List.of(nodes.getFirst(), unknown), closed);
        assertThat(assessments).allSatisfy(assessment -> assertThat(assessment).isInstanceOfSatisfying(PlacementPolicy.Misfit.class,
                misfit -> assertThat(misfit.rejection().reason()).contains("policy.jobHeadroom 4")));
        assertThat(policy.heldForRoom(pod, new ClusterGpus(8, 7, 12))).isEqualTo(HighPriorityReserve.ClosedTier.NONE);
        assertThat(new PlacementPolicy(PolicySettings.DEFAULTS).keepsRoomFrom(pod)).as("headroom off").isFalse();
    }
}
