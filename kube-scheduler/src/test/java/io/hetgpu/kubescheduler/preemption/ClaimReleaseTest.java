package io.hetgpu.kubescheduler.preemption;

import static io.hetgpu.kubescheduler.preemption.Pods.node;
import static io.hetgpu.kubescheduler.preemption.Pods.preemptor;
import static io.hetgpu.kubescheduler.preemption.Pods.running;
import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.kubescheduler.dra.DeviceId;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ClaimReleaseTest {

    private static Set<DeviceId> gpus(int from, int to) {
        return IntStream.range(from, to).mapToObj(i -> new DeviceId("gpu.nvidia.com", "dra", "gpu-" + i)).collect(Collectors.toSet());
    }

    private static Set<DeviceId> all(List<ClaimRelease.AllocatedClaim> claims) {
        var all = new HashSet<DeviceId>();
        claims.forEach(claim -> all.addAll(claim.devices()));
        return all;
    }

    @Test
    void aClaimReservedForTheEvictedPodAloneIsReleased() {
        var claims = List.of(new ClaimRelease.AllocatedClaim(gpus(0, 2), Set.of("low"), false, Set.of("low")),
                new ClaimRelease.AllocatedClaim(gpus(2, 4), Set.of("other"), false, Set.of("other")));

        assertThat(ClaimRelease.allocatedAfter(all(claims), claims, Set.of("low"))).isEqualTo(gpus(2, 4));
        assertThat(ClaimRelease.allocatedAfter(all(claims), claims, Set.of())).isEqualTo(gpus(0, 4));
    }

    @Test
    void aSharedClaimIsReleasedOnlyOnceEveryPodItIsReservedForIsEvicted() {
        var claims = List.of(new ClaimRelease.AllocatedClaim(gpus(0, 2), Set.of("a", "b"), false, Set.of("a", "b")));

        assertThat(ClaimRelease.allocatedAfter(gpus(0, 2), claims, Set.of("a"))).isEqualTo(gpus(0, 2));
        assertThat(ClaimRelease.allocatedAfter(gpus(0, 2), claims, Set.of("a", "b"))).isEmpty();
    }

    @Test
    void aClaimReservedForAPodGroupIsNeverReleasedByAnEviction() {
        var claims = List.of(new ClaimRelease.AllocatedClaim(gpus(0, 2), Set.of("a"), true, Set.of("a")));

        assertThat(ClaimRelease.allocatedAfter(gpus(0, 2), claims, Set.of("a"))).isEqualTo(gpus(0, 2));
    }

    @Test
    void aClaimReservedForNoOneIsReleasedByEvictingAPodThatNamesIt() {
        var claims = List.of(new ClaimRelease.AllocatedClaim(gpus(0, 2), Set.of(), false, Set.of("a")));

        assertThat(ClaimRelease.allocatedAfter(gpus(0, 2), claims, Set.of("b"))).isEqualTo(gpus(0, 2));
        assertThat(ClaimRelease.allocatedAfter(gpus(0, 2), claims, Set.of("a"))).isEmpty();
    }

    @Test
    void anUrgentPodPreemptsTheLowPodWhoseClaimHoldsTheDevicesItNeeds() {
        // A node of four DRA GPUs, all in one claim of the low pod; the urgent pod asks four through its own claim.
        var low = running("low-0", 0, 0, 0);
        var claims = List.of(new ClaimRelease.AllocatedClaim(gpus(0, 4), Set.of("low-0"), false, Set.of("low-0")));
        var urgent = preemptor(1000, 0);
        VictimSelection.Fit releasing = (node, left) -> {
            var evicted = new HashSet<>(Set.of("low-0"));
            left.forEach(pod -> evicted.remove(pod.uid()));
            return 4 - ClaimRelease.allocatedAfter(all(claims), claims, evicted).size() >= 4;
        };
        var preemption = new DefaultPreemption(CandidateSampling.DEFAULTS, new Random(1));

        var outcome = preemption.preempt(urgent, List.of(node("dra", 0)), Map.of("dra", List.of(low)), Set.of(), List.of(), releasing, List.of());

        assertThat(outcome).isEqualTo(new DefaultPreemption.Outcome.Nominate("dra", new Victims(List.of(low), 0)));
        // Without the release (kube-scheduler through 1.37: its plugin has no RemovePod), no eviction frees anything.
        VictimSelection.Fit holding = (node, left) -> 4 - all(claims).size() >= 4;
        assertThat(preemption.preempt(urgent, List.of(node("dra", 0)), Map.of("dra", List.of(low)), Set.of(), List.of(), holding, List.of()))
                .isEqualTo(new DefaultPreemption.Outcome.None(DefaultPreemption.NO_VICTIMS));
    }
}
