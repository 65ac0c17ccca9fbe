package io.hetgpu.extender.explain;

import io.hetgpu.extender.policy.PolicyAnswers;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class PlacementEventsTest {

    KubernetesClient client;

    @Test
    void postsOneThrottledEventPerPod() {
        var clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        var pod = TestPods.uid(PodRequest.gpus("train-0", 1), "uid-train-0");
        var events = new PlacementEvents(client, clock, Duration.ofMinutes(1), Runnable::run, known -> true);
        var table = PolicyAnswers.prioritize(new PlacementPolicy(PolicySettings.DEFAULTS), pod, List.of(TestNodes.gpu("t4", TestTopologies::t4x4)), PlacementContext.EMPTY);

        events.accept(pod, table);
        events.accept(pod, table);
        assertThat(client.v1().events().inNamespace("default").list().getItems()).hasSize(1);

        clock.now = clock.now.plusSeconds(61);
        events.accept(pod, table);
        var posted = client.v1().events().inNamespace("default").list().getItems();
        assertThat(posted).hasSize(2);
        assertThat(posted.getFirst().getReason()).isEqualTo("HetgpuPlacement");
        assertThat(posted.getFirst().getInvolvedObject().getName()).isEqualTo("train-0");
        assertThat(posted.getFirst().getMessage()).startsWith("best: t4 scores ");
    }

    @Test
    void podsTheApiServerDoesNotHaveGetNoEvent() {
        var clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        var real = TestPods.uid(PodRequest.gpus("train-0", 1), "uid-train-0");
        var events = new PlacementEvents(client, clock, Duration.ofMinutes(1), Runnable::run, pod -> pod.uid().equals(real.uid()));
        var table = PolicyAnswers.prioritize(new PlacementPolicy(PolicySettings.DEFAULTS), real, List.of(TestNodes.gpu("t4", TestTopologies::t4x4)), PlacementContext.EMPTY);

        // A caller on the extender's port invents pods in other namespaces: nothing is written for them.
        for (int i = 0; i < 50; i++) {
            events.accept(TestPods.uid(PodRequest.gpus("invented-" + i, 1), "uid-invented-" + i), table);
        }
        assertThat(client.v1().events().inAnyNamespace().list().getItems()).isEmpty();

        events.accept(real, table);
        assertThat(client.v1().events().inAnyNamespace().list().getItems()).extracting(e -> e.getInvolvedObject().getName())
                .containsExactly("train-0");
    }

    private static final class MutableClock extends Clock {
        Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
