package io.hetgpu.extender.throughput;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.policy.WorkloadThroughputs;
import java.util.Map;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

class LearnedTableTest {

    private static final LearnedTable LEARNED = new LearnedTable(7, Map.of(
            "bert", Map.of("V100", new LearnedTable.LearnedSpeed(10, 12, false), "A100", new LearnedTable.LearnedSpeed(25, 0, true)),
            "resnet50", Map.of("V100", new LearnedTable.LearnedSpeed(400, 30, false))));

    @Test
    void configuredRowsWinWholeAndLearnedRowsFillTheOtherClasses() {
        var configured = new WorkloadThroughputs(Map.of("resnet50", Map.of("K80", 1.81, "V100", 17.99)), 0.25);
        var merged = LEARNED.merged(configured);
        assertThat(merged.of("resnet50", "V100")).as("the admin's figure, not the learned one in another unit").isEqualTo(17.99);
        assertThat(merged.isPrior("resnet50", "V100")).isFalse();
        assertThat(merged.of("bert", "V100")).isEqualTo(10);
        assertThat(merged.isPrior("bert", "A100")).isTrue();
        assertThat(merged.minimumShare()).isEqualTo(0.25);
    }

    @Test
    void priorsFillTheCardsAConfiguredRowLacksFromThatRowsOwnFigures() {
        var configured = new WorkloadThroughputs(Map.of("resnet50", Map.of("V100", 18.0)));
        var merged = LearnedTable.EMPTY.merged(configured);
        assertThat(merged.of("resnet50", "A100")).isCloseTo(45, Offset.offset(1e-9));
        assertThat(merged.isPrior("resnet50", "A100")).isTrue();
        assertThat(merged.isPrior("resnet50", "V100")).isFalse();
    }

    @Test
    void nothingLearnedAndNothingConfiguredIsNoTable() {
        assertThat(LearnedTable.EMPTY.merged(WorkloadThroughputs.NONE).isEmpty()).isTrue();
    }
}
