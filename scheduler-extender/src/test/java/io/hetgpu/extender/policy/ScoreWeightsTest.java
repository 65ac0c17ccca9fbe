package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ScoreWeightsTest {

    @Test
    void everyRegisteredScorerHasAWeightByItsNameInTableOrder() {
        assertThat(ScoreWeights.names()).containsExactly("tier", "nvlink", "job", "data", "cpu", "packing");
        assertThat(ScoreWeights.DEFAULTS.byName()).containsExactly(Map.entry("tier", 4), Map.entry("nvlink", 3), Map.entry("job", 3),
                Map.entry("data", 2), Map.entry("cpu", 5), Map.entry("packing", 2));
    }

    @Test
    void namedWeightsKeepTheDefaultsOfTheScorersTheyDoNotName() {
        var weights = ScoreWeights.named(Map.of("tier", 8, "cpu", 0));
        assertThat(weights.of("tier")).isEqualTo(8);
        assertThat(weights.of("cpu")).isZero();
        assertThat(weights.of("nvlink")).isEqualTo(ScoreWeights.DEFAULTS.of("nvlink"));
    }

    @Test
    void everyBadEntryIsReportedTogether() {
        var given = new LinkedHashMap<String, Integer>();
        given.put("nvlnk", 2);
        given.put("tier", 101);
        given.put("gpu", 1);
        assertThatThrownBy(() -> ScoreWeights.named(given))
                .hasMessage("nvlnk: no scorer of that name (scorers: cpu, data, job, nvlink, packing, tier), got 2; tier: expected 0..100, got 101;"
                        + " gpu: no scorer of that name (scorers: cpu, data, job, nvlink, packing, tier), got 1");
    }

    @Test
    void atLeastOneScorerMustCount() {
        var none = new LinkedHashMap<String, Integer>();
        ScoreWeights.names().forEach(name -> none.put(name, 0));
        assertThatThrownBy(() -> ScoreWeights.named(none)).hasMessage("at least one weight must be above 0");
        assertThatThrownBy(() -> ScoreWeights.DEFAULTS.with("speed", 1)).hasMessageContaining("no scorer named speed");
    }
}
