package io.hetgpu.testcluster.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.report.Eviction;
import org.junit.jupiter.api.Test;

/**
 * The demo's preemption scene, with the real extender, device plugins and simulated kubelets: whom each scheduler
 * evicts for the urgent 8-GPU NVLink job, what the victims lose, and where the urgent job runs.
 */
class PreemptionSceneTest {

    @Test
    void hetgpuFreesTheNewestCardsAtTheLeastLossAndEvictsOnlyOnce() throws Exception {
        var scene = PreemptionScene.run(DemoRun.Scheduler.HETGPU, DeployedConfiguration.load(ProjectFiles.manifests()), 42, message -> { });

        // Exactly the four A100 trials: a second preemption (the extender refusing the freed node while the plugin's
        // free list lags the eviction) would also list the V100 trials here.
        assertThat(scene.evictions()).hasSize(4).allSatisfy(e -> assertThat(e.node()).isEqualTo(PreemptionScene.A100))
                .extracting(Eviction::pod).allMatch(pod -> pod.matches("nightly-sweep-[0-3]"));
        // Four 2-GPU trials, each 5 minutes past its checkpoint: 4 x 2 x 5 / 60 GPU-hours.
        assertThat(scene.gpuHoursLost()).isCloseTo(4 * 2 * 5 / 60.0, within(0.05));
        assertThat(scene.urgent().node()).isEqualTo(PreemptionScene.A100);
        assertThat(scene.urgent().gpus()).hasSize(8);
        assertThat(scene.urgent().nvlinkSet()).isTrue();
    }

    @Test
    void kubeSchedulerAloneEvictsTheTrialsThatStartedLastAndTheirLongerWork() throws Exception {
        var scene = PreemptionScene.run(DemoRun.Scheduler.BASELINE, DeployedConfiguration.load(ProjectFiles.manifests()), 42, message -> { });

        assertThat(scene.evictions()).hasSize(4).allSatisfy(e -> assertThat(e.node()).isEqualTo(PreemptionScene.V100));
        assertThat(scene.gpuHoursLost()).isCloseTo(4 * 2 * 50 / 60.0, within(0.05));
        assertThat(scene.urgent().node()).isEqualTo(PreemptionScene.V100);
    }
}
