package io.hetgpu.testcluster.kubelet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A run lasts its work over its speed: the class's figure on its slowest card times its GPUs. */
class SpeedTableTest {

    private static final SpeedTable SPEEDS = SpeedTable.of("LSTM", Map.of("Tesla V100-SXM2-16GB", 18.0, "P100", 24.0));

    @Test
    void aRunLastsItsWorkOverTheSpeedOfItsCardsTimesItsGpus() {
        assertThat(SPEEDS.runTime("lstm", List.of("P100", "P100"), 86_400))
                .isEqualTo(new SpeedTable.RunTime.Known(Duration.ofMinutes(30), "P100", 24.0));
        assertThat(SPEEDS.runTime("lstm", List.of("V100"), 18 * 600))
                .isEqualTo(new SpeedTable.RunTime.Known(Duration.ofMinutes(10), "V100", 18.0));
    }

    @Test
    void classesAndCardsAreNamedAsTheExtenderNamesThem() {
        assertThat(SPEEDS.workPerGpuSecond()).containsOnlyKeys("lstm");
        assertThat(SPEEDS.workPerGpuSecond().get("lstm")).containsOnlyKeys("V100", "P100");
        assertThat(SPEEDS.speed(" Lstm ", "Tesla P100-SXM2-16GB")).hasValue(24.0);
    }

    @Test
    void aSetOfMixedCardsRunsAtItsSlowestCardsPace() {
        var known = (SpeedTable.RunTime.Known) SPEEDS.runTime("lstm", List.of("P100", "V100"), 36_000);
        assertThat(known.cardModel()).isEqualTo("V100");
        assertThat(known.duration()).isEqualTo(Duration.ofSeconds(1000));
    }

    @Test
    void whatTheTableCannotTimeIsSaidNamingTheValue() {
        assertThat(SPEEDS.runTime("bert", List.of("V100"), 1000)).isInstanceOfSatisfying(SpeedTable.RunTime.Unknown.class,
                unknown -> assertThat(unknown.reason()).contains("\"bert\"", "\"V100\"", "not in the speed table"));
        assertThat(SPEEDS.runTime("lstm", List.of("K80"), 1000)).isInstanceOfSatisfying(SpeedTable.RunTime.Unknown.class,
                unknown -> assertThat(unknown.reason()).contains("\"K80\""));
        assertThat(SPEEDS.runTime("lstm", List.of(""), 1000)).isInstanceOf(SpeedTable.RunTime.Unknown.class);
        assertThat(SPEEDS.runTime("lstm", List.of(), 1000)).isInstanceOfSatisfying(SpeedTable.RunTime.Unknown.class,
                unknown -> assertThat(unknown.reason()).startsWith("GPUs: none"));
        assertThat(SPEEDS.runTime("lstm", List.of("V100"), Double.NaN)).isInstanceOfSatisfying(SpeedTable.RunTime.Unknown.class,
                unknown -> assertThat(unknown.reason()).startsWith("work: ").contains("NaN"));
        assertThat(SPEEDS.runTime("lstm", List.of("V100"), -5)).isInstanceOf(SpeedTable.RunTime.Unknown.class);
    }

    @Test
    void aTableWithoutASpeedIsRefusedNamingIt() {
        assertThatThrownBy(() -> SpeedTable.of("lstm", Map.of("V100", 0.0))).hasMessageContaining("\"lstm\" on \"V100\"");
        assertThatThrownBy(() -> SpeedTable.of("lstm", Map.of("V100", Double.POSITIVE_INFINITY))).isInstanceOf(IllegalArgumentException.class);
    }
}
