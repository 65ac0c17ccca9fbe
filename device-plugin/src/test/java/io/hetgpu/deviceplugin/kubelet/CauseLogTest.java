package io.hetgpu.deviceplugin.kubelet;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class CauseLogTest {

    private final List<String> logged = new ArrayList<>();
    private final CauseLog causes = new CauseLog(logged::add);

    @Test
    void logsACauseOnceHoweverOftenItRepeats() {
        assertThat(causes.report("kubelet socket does not exist yet")).isTrue();
        assertThat(causes.report("kubelet socket does not exist yet")).isFalse();
        assertThat(causes.report("kubelet socket does not exist yet")).isFalse();

        assertThat(logged).containsExactly("kubelet socket does not exist yet");
    }

    @Test
    void logsEachChangeOfCauseIncludingABackAndForth() {
        causes.report("kubelet refused: UNAVAILABLE");
        causes.report("folder read-only");
        causes.report("folder read-only");
        causes.report("kubelet refused: UNAVAILABLE");

        assertThat(logged).containsExactly("kubelet refused: UNAVAILABLE", "folder read-only", "kubelet refused: UNAVAILABLE");
    }

    @Test
    void afterASuccessTheSameCauseIsNewsAgain() {
        causes.report("kubelet refused: UNAVAILABLE");
        causes.clear();
        causes.report("kubelet refused: UNAVAILABLE");

        assertThat(logged).hasSize(2);
    }
}
