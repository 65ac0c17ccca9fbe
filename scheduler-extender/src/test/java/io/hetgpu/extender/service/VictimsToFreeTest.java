package io.hetgpu.extender.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.model.BoundPod;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The victims hetgpu names on a candidate kube-scheduler 1.38+ proposes with none: the fewest pods of lower priority
 * holding GPUs, chosen as kube-scheduler chooses (all removed, then each given back, the most important first, while the
 * pod still fits). Here the pod fits when at least {@code needed} GPUs are free; the node starts with {@code free}.
 */
class VictimsToFreeTest {

    private static final Instant AT = Instant.parse("2026-11-28T10:00:00Z");
    private static final int PREEMPTOR = 1000;

    @Test
    void evictsTheLeastImportantPodsThatMakeRoomAndGivesTheOthersBack() {
        var bound = List.of(pod("high", 2, 500, 30), pod("low-old", 2, 10, 60), pod("low-new", 2, 10, 5), pod("lowest", 1, 0, 90));

        // 3 GPUs needed, none free: "high" is given back first, then "low-old" (bound earlier, so more important); then
        // "low-new" cannot be (only "lowest"'s 1 GPU would be free), and "lowest" cannot either.
        assertThat(victims(bound, fits(bound, 0, 3))).hasValue(List.of("low-new", "lowest"));
    }

    @Test
    void aPodThatFitsAsItIsNeedsNoVictims() {
        var bound = List.of(pod("low", 2, 10, 30));

        assertThat(victims(bound, fits(bound, 4, 4))).hasValue(List.of());
    }

    @Test
    void noneWhenEvenEveryPodOfLowerPriorityLeavesTooFew() {
        var bound = List.of(pod("low", 2, 10, 30), pod("peer", 4, PREEMPTOR, 30), pod("above", 2, 2000, 30));

        assertThat(victims(bound, fits(bound, 0, 4))).isEmpty();
    }

    @Test
    void onlyLowerPriorityPodsThatHoldGpusNowAreEverVictims() {
        var cpuOnly = pod("cpu-only", 0, 0, 30);
        var released = new BoundPod("released", 4, false, AT.minusSeconds(30), List.of(), 0, AT.minusSeconds(1));
        var binding = new BoundPod("binding", 4, false, AT.minusSeconds(1), List.of(), 0, BoundPod.HOLDING, true);
        var equal = pod("equal", 4, PREEMPTOR, 30);
        var low = pod("low", 2, 10, 30);
        var bound = List.of(cpuOnly, released, binding, equal, low);
        var asked = new ArrayList<Set<String>>();
        Predicate<Set<String>> fits = gone -> {
            asked.add(gone);
            return gone.contains("low");
        };

        assertThat(victims(bound, fits)).hasValue(List.of("low"));
        assertThat(asked).allSatisfy(gone -> assertThat(gone).isSubsetOf("low"));
    }

    @Test
    void podsABudgetGuardsAreGivenBackFirstAndThoseStillEvictedAreCounted() {
        // Four 2-GPU pods; the two bound earliest are guarded by a budget. 4 GPUs needed: guarded ones are given back
        // first, so the two unguarded ones go and no budget breaks.
        var bound = List.of(pod("guarded-a", 2, 10, 90), pod("guarded-b", 2, 10, 80), pod("free-a", 2, 10, 20), pod("free-b", 2, 10, 10));
        var unguarded = Set.of("free-a", "free-b");

        assertThat(VictimsToFree.choose(bound, PREEMPTOR, unguarded, fits(bound, 0, 4)))
                .hasValue(new VictimsToFree.Choice(List.of("free-a", "free-b"), 0));
        // 6 GPUs needed: one guarded pod must go too, and it is counted.
        assertThat(VictimsToFree.choose(bound, PREEMPTOR, unguarded, fits(bound, 0, 6)))
                .hasValue(new VictimsToFree.Choice(List.of("guarded-b", "free-a", "free-b"), 1));
    }

    /** The victims where no budget guards any pod. */
    private static java.util.Optional<List<String>> victims(List<BoundPod> bound, Predicate<Set<String>> fits) {
        var all = bound.stream().map(BoundPod::uid).collect(Collectors.toSet());
        return VictimsToFree.choose(bound, PREEMPTOR, all, fits).map(choice -> {
            assertThat(choice.budgetsBroken()).isZero();
            return choice.victims();
        });
    }

    private static BoundPod pod(String uid, int gpus, int priority, long boundSecondsAgo) {
        return new BoundPod(uid, gpus, false, AT.minusSeconds(boundSecondsAgo), List.of(), priority);
    }

    /** Fits once {@code free} plus the GPUs of the pods gone reach {@code needed}. */
    private static Predicate<Set<String>> fits(List<BoundPod> bound, int free, int needed) {
        Map<String, Integer> gpus = bound.stream().collect(Collectors.toMap(BoundPod::uid, BoundPod::gpuCount));
        return gone -> free + gone.stream().mapToInt(gpus::get).sum() >= needed;
    }
}
