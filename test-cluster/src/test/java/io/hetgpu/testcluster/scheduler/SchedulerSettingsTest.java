package io.hetgpu.testcluster.scheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class SchedulerSettingsTest {

    @Test
    void readsTheExtenderEntryWithKubeSchedulerDefaults() {
        var settings = SchedulerSettings.parse("""
                apiVersion: kubescheduler.config.k8s.io/v1
                kind: KubeSchedulerConfiguration
                percentageOfNodesToScore: 100
                profiles:
                  - schedulerName: hetgpu-scheduler
                extenders:
                  - urlPrefix: http://hetgpu-scheduler-extender.hetgpu-system.svc:8888
                    filterVerb: filter
                    prioritizeVerb: prioritize
                    weight: 5
                    nodeCacheCapable: true
                    managedResources:
                      - name: nvidia.com/gpu
                        ignoredByScheduler: false
                """);

        assertThat(settings.schedulerName()).isEqualTo("hetgpu-scheduler");
        assertThat(settings.percentageOfNodesToScore()).isEqualTo(100);
        var extender = settings.extenders().get(0);
        assertThat(extender.weight()).isEqualTo(5);
        assertThat(extender.nodeCacheCapable()).isTrue();
        assertThat(extender.ignorable()).isFalse();
        assertThat(extender.httpTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(extender.managedResources()).containsExactly("nvidia.com/gpu");
        assertThat(extender.preemptVerb()).isEmpty();
    }

    @Test
    void parsesGoDurations() {
        assertThat(SchedulerSettings.parseGoDuration("1m30s")).isEqualTo(Duration.ofSeconds(90));
        assertThat(SchedulerSettings.parseGoDuration("250ms")).isEqualTo(Duration.ofMillis(250));
        assertThatThrownBy(() -> SchedulerSettings.parseGoDuration("soon")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void namesTheBadField() {
        assertThatThrownBy(() -> SchedulerSettings.parse("kind: KubeSchedulerConfiguration\nextenders:\n  - filterVerb: filter\n"))
                .hasMessage("extenders[0].urlPrefix: missing");
        assertThatThrownBy(() -> SchedulerSettings.parse("kind: KubeSchedulerConfiguration\nextenders:\n  - urlPrefix: http://x\n    httpTimeout: later\n"))
                .hasMessage("extenders[0].httpTimeout: expected a duration such as 5s, got \"later\"");
        assertThatThrownBy(() -> SchedulerSettings.parse("kind: Pod\n")).hasMessageContaining("kind: expected KubeSchedulerConfiguration");
    }
}
