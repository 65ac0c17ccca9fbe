package io.hetgpu.deviceplugin.training;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The training run's plugin watcher confirms only a registration kubelet would confirm, and says why not otherwise. */
class TrainingPluginWatcherTest {

    @Test
    void confirmsADraDriverServingTheV1ServiceAtAnAbsoluteSocket() {
        assertThat(TrainingPluginWatcher.infoProblem("DRAPlugin", "/var/lib/kubelet/plugins/gpu.hetgpu.io/dra.sock",
                List.of("v1.DRAPlugin", "v1beta1.DRAPlugin"))).isEmpty();
    }

    @Test
    void refusesAnotherKindOfPluginARelativeSocketOrNoV1ServiceNamingWhatItGot() {
        assertThat(TrainingPluginWatcher.infoProblem("CSIPlugin", "/p/dra.sock", List.of("v1.DRAPlugin")))
                .isEqualTo("GetInfo answered type \"CSIPlugin\", not DRAPlugin");
        assertThat(TrainingPluginWatcher.infoProblem("DRAPlugin", "dra.sock", List.of("v1.DRAPlugin")))
                .isEqualTo("GetInfo answered endpoint \"dra.sock\", not an absolute socket path");
        assertThat(TrainingPluginWatcher.infoProblem("DRAPlugin", "/p/dra.sock", List.of("v1beta1.DRAPlugin")))
                .isEqualTo("GetInfo answered supported versions [v1beta1.DRAPlugin], without v1.DRAPlugin");
    }
}
