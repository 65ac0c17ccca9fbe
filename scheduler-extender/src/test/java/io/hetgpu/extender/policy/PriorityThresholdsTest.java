package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A pod's priority annotation lowers what its PriorityClass gives, and raises it only in a trusted namespace. */
class PriorityThresholdsTest {

    private static final PriorityThresholds TRUSTING_PLATFORM = new PriorityThresholds(1000, -1, Set.of("ml-platform"));

    private static PodRequest pod(String namespace, int specPriority, PriorityHint hint) {
        return new PodRequest(namespace, "train-0", "", 4, Set.of(), 0, PodRequest.ANY_COMPUTE_CAPABILITY, false, specPriority, hint,
                GpuPreference.UNSET, "", "", List.of());
    }

    @Test
    void aLowPriorityClassPodThatWritesHighStaysLowWithoutTheNewestCards() {
        var sweep = pod("team-a", -100, PriorityHint.HIGH);

        assertThat(PriorityThresholds.DEFAULTS.levelOf(sweep)).isEqualTo(PriorityHint.LOW);
        assertThat(TierPreference.of(sweep, PriorityThresholds.DEFAULTS)).isEqualTo(GpuPreference.OLDEST);
        assertThat(TierPreference.isHighPriority(sweep, PriorityThresholds.DEFAULTS)).isFalse();
        assertThat(PriorityThresholds.DEFAULTS.ignoredHint(sweep))
                .isEqualTo("hetgpu.io/priority: high ignored, spec.priority -100 gives low (only a trusted namespace may raise it)");
    }

    @Test
    void aPodWithoutAClassCannotRaiseItselfEitherNorCanNormalRaiseALowOne() {
        assertThat(PriorityThresholds.DEFAULTS.levelOf(pod("team-a", 0, PriorityHint.HIGH))).isEqualTo(PriorityHint.NORMAL);
        assertThat(TierPreference.of(pod("team-a", 0, PriorityHint.HIGH), PriorityThresholds.DEFAULTS)).isEqualTo(GpuPreference.ANY);
        assertThat(PriorityThresholds.DEFAULTS.levelOf(pod("team-a", -100, PriorityHint.NORMAL))).isEqualTo(PriorityHint.LOW);
    }

    @Test
    void theAnnotationMayLowerAHighPriorityClass() {
        var lowered = pod("team-a", 5000, PriorityHint.LOW);

        assertThat(PriorityThresholds.DEFAULTS.levelOf(lowered)).isEqualTo(PriorityHint.LOW);
        assertThat(TierPreference.of(lowered, PriorityThresholds.DEFAULTS)).isEqualTo(GpuPreference.OLDEST);
        assertThat(PriorityThresholds.DEFAULTS.ignoredHint(lowered)).isEmpty();
        assertThat(PriorityThresholds.DEFAULTS.levelOf(pod("team-a", 5000, PriorityHint.NORMAL))).isEqualTo(PriorityHint.NORMAL);
        assertThat(PriorityThresholds.DEFAULTS.levelOf(pod("team-a", 5000, PriorityHint.HIGH))).isEqualTo(PriorityHint.HIGH);
    }

    @Test
    void aTrustedNamespaceMayRaiseAndOnlyIt() {
        var trusted = pod("ml-platform", -100, PriorityHint.HIGH);

        assertThat(TRUSTING_PLATFORM.levelOf(trusted)).isEqualTo(PriorityHint.HIGH);
        assertThat(TierPreference.isHighPriority(trusted, TRUSTING_PLATFORM)).isTrue();
        assertThat(TRUSTING_PLATFORM.ignoredHint(trusted)).isEmpty();
        assertThat(TRUSTING_PLATFORM.levelOf(pod("team-a", -100, PriorityHint.HIGH))).isEqualTo(PriorityHint.LOW);
    }

    @Test
    void withoutTheAnnotationSpecPriorityDecides() {
        assertThat(PriorityThresholds.DEFAULTS.levelOf(pod("team-a", 1000, PriorityHint.UNSET))).isEqualTo(PriorityHint.HIGH);
        assertThat(PriorityThresholds.DEFAULTS.levelOf(pod("team-a", 0, PriorityHint.UNSET))).isEqualTo(PriorityHint.NORMAL);
        assertThat(PriorityThresholds.DEFAULTS.levelOf(pod("team-a", -1, PriorityHint.UNSET))).isEqualTo(PriorityHint.LOW);
        assertThat(PriorityThresholds.DEFAULTS.ignoredHint(pod("team-a", -1, PriorityHint.UNSET))).isEmpty();
    }
}
