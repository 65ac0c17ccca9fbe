package io.hetgpu.extender.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestTopologies;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A pod that let its GPUs go while the device plugin's free list still shows them taken: they count free, so that a
 * preemptor whose victims are gone is not refused and does not preempt a second time.
 */
class ReleasedHoldingsTest {

    private final NodeStateFactory factory = new NodeStateFactory(CardCatalog.defaults(), "rack");
    private final NodeTopology dgx = TestTopologies.dgxA100("dgx-1");
    /** The list, read at READ_AT, shows GPUs 4-7 free: 0-3 were held by the victim then. */
    private final NodeFacts listShowingFourTaken = new NodeFacts("dgx-1", "1", Map.of(), TestTopologies.inventory(dgx),
            TestTopologies.free(dgx, 4, 5, 6, 7));

    private BoundPod victim(int... positions) {
        var devices = Arrays.stream(positions).mapToObj(p -> dgx.device(p).uuid()).toList();
        return new BoundPod("victim", positions.length, false, TestTopologies.READ_AT.minusSeconds(600), devices, -100);
    }

    @Test
    void devicesReleasedAfterTheListWasReadCountFree() {
        var gone = victim(0, 1, 2, 3).releasedAt(TestTopologies.READ_AT.plusSeconds(1));

        assertThat(factory.state(listShowingFourTaken, List.of(gone)).freeMask()).isEqualTo(0xFFL);
    }

    @Test
    void aListReadAfterTheReleaseThatStillShowsThemTakenDoesNotTakeThemBack() {
        // kubelet frees a deleted pod's devices lazily: the plugin can read them as taken after the pod is gone.
        var goneBefore = victim(0, 1, 2, 3).releasedAt(TestTopologies.READ_AT.minusSeconds(1));

        assertThat(factory.state(listShowingFourTaken, List.of(goneBefore)).freeMask()).isEqualTo(0xFFL);
        // Until a list read long after the release (BoundPod.RELEASE_MEMORY), which is believed.
        var goneLongBefore = victim(0, 1, 2, 3).releasedAt(TestTopologies.READ_AT.minus(BoundPod.RELEASE_MEMORY).minusSeconds(1));
        assertThat(factory.state(listShowingFourTaken, List.of(goneLongBefore)).freeMask()).isEqualTo(0xF0L);
    }

    @Test
    void aReleasedPodWithoutARecordFreesWhatThePluginWouldHaveGivenItAndAPodBoundSinceKeepsItsOwn() {
        // The victim had no record: predicted on GPUs 0-3 (the allocator's best four of eight, as the plugin chose them).
        var unrecorded = new BoundPod("victim", 4, false, TestTopologies.READ_AT.minusSeconds(600), List.of(), -100)
                .releasedAt(TestTopologies.READ_AT.plusSeconds(1));
        var freeWithout = factory.state(listShowingFourTaken, List.of(unrecorded)).freeMask();
        assertThat(Long.bitCount(freeWithout)).isEqualTo(8);

        // The preemptor, bound after the release with a record of GPUs 0-3: those are its own, not free.
        var preemptor = new BoundPod("urgent", 4, true, TestTopologies.READ_AT.plusSeconds(2),
                Arrays.stream(new int[] {0, 1, 2, 3}).mapToObj(p -> dgx.device(p).uuid()).toList(), 1000);
        assertThat(factory.state(listShowingFourTaken, List.of(unrecorded, preemptor)).freeMask()).isEqualTo(0xF0L);
    }

    @Test
    void aPodWithoutARecordBoundAfterTheReleaseButBeforeTheReadKeepsWhatItMayHaveTaken() {
        // Released before the read, and a pod bound without the handshake took four GPUs before the read too: the list
        // may show the victim's GPUs taken, or the newcomer's, and cannot say which; four are not free either way.
        var gone = victim(0, 1, 2, 3).releasedAt(TestTopologies.READ_AT.minusSeconds(30));
        var newcomer = new BoundPod("newcomer", 4, false, TestTopologies.READ_AT.minusSeconds(20));

        assertThat(Long.bitCount(factory.state(listShowingFourTaken, List.of(gone, newcomer)).freeMask())).isEqualTo(4);
    }

    @Test
    void aNodeWithoutAFreeListCountsAReleasedPodsDevicesFreeToo() {
        // No free list yet (the plugin has not published one): read "at the beginning of time".
        var noList = new NodeFacts("dgx-1", "1", Map.of(), TestTopologies.inventory(dgx), null);
        var gone = victim(0, 1, 2, 3).releasedAt(TestTopologies.READ_AT);

        assertThat(factory.state(noList, List.of(gone)).freeMask()).isEqualTo(0xFFL);
    }

    @Test
    void aReleasedPodIsNeverTakenForAHolder() {
        Instant now = TestTopologies.READ_AT.plusSeconds(1);
        assertThat(victim(0).releasedAt(now).released()).isTrue();
        assertThat(victim(0).released()).isFalse();
    }
}
