package io.hetgpu.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AlibabaTraceTest {

    @Test
    void theTraceRunsOnItsOwnNodesWithItsConstraintsAsStandIns() {
        var experiment = AlibabaTrace.experiment();
        assertThat(experiment.inventory().nodes()).hasSize(1213);
        assertThat(experiment.inventory().gpuCount()).isEqualTo(2 + 549 * 8 + 39 * 8 + 3 + 131 * 2 + 387 * 2 + 17 * 4 + 19 + 28 * 4 + 8 * 8 + 9 * 4 + 21 * 8);
        assertThat(experiment.jobs()).hasSize(8152 - 1088);
        assertThat(experiment.jobs()).filteredOn(job -> job.models().contains("A100")).isNotEmpty();  // G2
        assertThat(experiment.jobs()).filteredOn(job -> job.minMemoryMiB() > 0).allMatch(job -> job.models().equals(java.util.Set.of("V100")));
    }
}
