package io.hetgpu.extender.explain;

import io.hetgpu.gpu.MutableClock;

import io.hetgpu.extender.policy.PolicyAnswers;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.tier.CardCatalog;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestPods;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.GpuPreference;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PriorityHint;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class PlacementEventsTest {

    KubernetesClient client;

    @Test
    void postsOneThrottledEventPerPod() {
        var clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        var pod = TestPods.uid(PodRequest.gpus("train-0", 1), "uid-train-0");
        var events = new PlacementEvents(client, clock, Duration.ofMinutes(1), Runnable::run, asked -> asked, uid -> null,
                PriorityThresholds.DEFAULTS);
        var table = PolicyAnswers.prioritize(new PlacementPolicy(PolicySettings.DEFAULTS), pod, List.of(TestNodes.gpu("t4", TestTopologies::t4x4)), PlacementContext.EMPTY);

        events.accept(pod, table);
        events.accept(pod, table);
        assertThat(client.v1().events().inNamespace("default").list().getItems()).hasSize(1);

        clock.advance(Duration.ofSeconds(61));
        events.accept(pod, table);
        var posted = client.v1().events().inNamespace("default").list().getItems();
        assertThat(posted).hasSize(2);
        assertThat(posted.getFirst().getReason()).isEqualTo("HetgpuPlacement");
        assertThat(posted.getFirst().getInvolvedObject().getName()).isEqualTo("train-0");
        assertThat(posted.getFirst().getMessage()).startsWith("best: t4, the only node that fits ");
    }

    @Test
    void theEventSaysWhenAPodsPriorityAnnotationWouldHaveRaisedItAndWasIgnored() {
        var clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        var raised = TestPods.uid(TestPods.priority(PodRequest.gpus("sweep-0", 1), -100, PriorityHint.HIGH, GpuPreference.UNSET), "uid-sweep-0");
        var events = new PlacementEvents(client, clock, Duration.ofMinutes(1), Runnable::run, asked -> asked, uid -> null,
                PriorityThresholds.DEFAULTS);
        var table = PolicyAnswers.prioritize(new PlacementPolicy(PolicySettings.DEFAULTS), raised, List.of(TestNodes.gpu("t4", TestTopologies::t4x4)),
                PlacementContext.EMPTY);

        events.accept(raised, table);

        assertThat(client.v1().events().inNamespace("default").list().getItems()).singleElement().satisfies(event -> assertThat(event.getMessage())
                .startsWith("hetgpu.io/priority: high ignored, spec.priority -100 gives low (only a trusted namespace may raise it); best: t4, the only node that fits "));
    }

    @Test
    void podsTheApiServerDoesNotHaveGetNoEvent() {
        var clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        var real = TestPods.uid(PodRequest.gpus("train-0", 1), "uid-train-0");
        var events = new PlacementEvents(client, clock, Duration.ofMinutes(1), Runnable::run,
                asked -> asked.uid().equals(real.uid()) ? real : null, uid -> null, PriorityThresholds.DEFAULTS);
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

    @Test
    void aRequestThatDescribesARealPodOtherwiseWritesNothingOnIt() throws Exception {
        var parser = new PodRequestParser("nvidia.com/gpu", CardCatalog.defaults());
        var stored = new PodBuilder().withNewMetadata().withName("train-0").withNamespace("ml").withUid("uid-train-0").endMetadata()
                .withNewSpec().withPriority(0).addNewContainer().withName("main").withImage("train").withNewResources()
                .addToLimits("nvidia.com/gpu", new Quantity("1")).endResources().endContainer().endSpec().build();
        var events = new PlacementEvents(client, new MutableClock(Instant.parse("2026-01-01T00:00:00Z")), Duration.ofMinutes(1),
                Runnable::run, PlacementEvents.asInformersHoldIt(uid -> uid.equals("uid-train-0") ? stored : null, parser), uid -> null,
                PriorityThresholds.DEFAULTS);
        var policy = new PlacementPolicy(PolicySettings.DEFAULTS);
        var nodes = List.of(TestNodes.gpu("t4", TestTopologies::t4x4));

        // The real name and UID, with an annotation and a priority the pod does not have: the text would be invented.
        var invented = parser.parse(new PodBuilder(stored).editMetadata()
                .addToAnnotations(HetgpuKeys.POD_GPU_MODELS, "T4").endMetadata().editSpec().withPriority(1_000_000).endSpec().build());
        events.accept(invented, PolicyAnswers.prioritize(policy, invented, nodes, PlacementContext.EMPTY));
        // The real UID under another namespace.
        var elsewhere = parser.parse(new PodBuilder(stored).editMetadata().withNamespace("kube-system").endMetadata().build());
        events.accept(elsewhere, PolicyAnswers.prioritize(policy, elsewhere, nodes, PlacementContext.EMPTY));
        assertThat(client.v1().events().inAnyNamespace().list().getItems()).isEmpty();

        var real = parser.parse(stored);
        events.accept(real, PolicyAnswers.prioritize(policy, real, nodes, PlacementContext.EMPTY));
        assertThat(client.v1().events().inAnyNamespace().list().getItems()).singleElement().satisfies(event -> {
            assertThat(event.getMetadata().getNamespace()).isEqualTo("ml");
            assertThat(event.getInvolvedObject().getUid()).isEqualTo("uid-train-0");
        });
    }

    @Test
    void theEventGivesTheLearnedFigureOfTheTableAsItIsNow() {
        var clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        var learner = new io.hetgpu.extender.throughput.ThroughputLearner(io.hetgpu.extender.throughput.LearningSettings.DEFAULTS);
        var source = io.hetgpu.extender.throughput.ThroughputSource.learning(learner, io.hetgpu.extender.policy.WorkloadThroughputs.NONE);
        var events = new PlacementEvents(client, clock, Duration.ofMinutes(1), Runnable::run, asked -> asked, uid -> null,
                PriorityThresholds.DEFAULTS, source::current);
        for (var run : List.of("V100:400", "V100:420", "K80:130")) {
            var card = run.split(":");
            learner.observe(new io.hetgpu.extender.throughput.WorkSample("resnet50", "team-a", card[0], 1, 1000,
                    1000 * Double.parseDouble(card[1]), Instant.EPOCH));
        }
        var pod = TestPods.uid(TestPods.priority(PodRequest.gpus("train-0", 1), 5000, PriorityHint.UNSET, GpuPreference.UNSET)
                .withWorkload("resnet50"), "uid-train-0");
        var table = PolicyAnswers.prioritize(new PlacementPolicy(PolicySettings.DEFAULTS, source), pod,
                List.of(TestNodes.gpu("k80", TestTopologies::k80x4), TestNodes.gpu("v100", TestTopologies::dgx1V100)), PlacementContext.EMPTY);

        events.accept(pod, table);

        assertThat(client.v1().events().inNamespace("default").list().getItems()).singleElement().satisfies(event -> assertThat(event.getMessage())
                .startsWith("best: v100 scores ").contains("resnet50 runs 3.2x faster per GPU on V100 than on K80 (learned, 2 and 1 run)"));
    }
}
