package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.hetgpu.extender.throughput.LearnedState;
import io.hetgpu.extender.throughput.LearnedStateCodec;
import io.hetgpu.extender.throughput.LearningSettings;
import io.hetgpu.extender.throughput.ThroughputLearner;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.net.InetAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The learner fed by pods that end and kept in its ConfigMap: made at a first start, written at a stop, read back at a
 * restart without counting a run twice, never overwritten while it cannot be read, and two replicas' writes settled.
 */
class ThroughputLearningTest {

    private static final String NAMESPACE = "hetgpu-system";
    private static final Duration PATIENCE = Duration.ofSeconds(20);
    private static final Instant START = Instant.parse("2026-11-28T04:00:00Z");
    /** No periodic write within a test: only the first start's and the stop's. */
    private static final ThroughputLearning.Settings RARELY = ThroughputLearning.Settings.DEFAULTS.withPersistEvery(Duration.ofHours(1));

    private final Api api = new Api();
    private final List<ThroughputLearning> started = new ArrayList<>();

    @AfterEach
    void stop() {
        started.forEach(ThroughputLearning::close);
        api.close();
    }

    @Test
    void aFirstStartMakesTheConfigMapAndAStopWritesWhatWasLearned() {
        var learning = start(List.of());
        await().atMost(PATIENCE).until(() -> stored() != null);
        assertThat(LearnedStateCodec.fromJson(stored().getData().get(LearnedThroughputsConfigMap.DATA_KEY))).isEqualTo(LearnedState.EMPTY);

        learning.seen(ended("uid-1", "resnet50", 600, 12_000, 60));
        await().atMost(PATIENCE).until(() -> learning.accepted() == 1);
        learning.close();

        var map = stored();
        assertThat(map.getMetadata().getAnnotations()).containsEntry(LearnedThroughputsConfigMap.LEARNED_THROUGH, START.plusSeconds(660).toString());
        var state = LearnedStateCodec.fromJson(map.getData().get(LearnedThroughputsConfigMap.DATA_KEY));
        // 12,000 steps in 600 s on 2 GPUs.
        assertThat(state).isEqualTo(new LearnedState(List.of(new LearnedState.ClassSamples("resnet50", List.of(
                new LearnedState.CardSamples("V100", List.of(new LearnedState.NamespaceSamples("ml", List.of(10.0), 2))))))));
    }

    @Test
    void aRestartReadsBackWhatWasLearnedAndCountsNoRunTwice() {
        var old = ended("uid-1", "resnet50", 600, 12_000, 60);
        var first = start(List.of(old));
        await().atMost(PATIENCE).until(() -> first.accepted() == 1);
        first.close();

        // The restarted extender's informers list the pod that ended before again, beside one that ended since.
        var newer = ended("uid-2", "resnet50", 600, 13_200, 3600);
        var second = start(List.of(old, newer));

        await().atMost(PATIENCE).until(() -> second.accepted() == 1);
        var speed = second.learner().table().byClass().get("resnet50").get("V100");
        assertThat(speed.samples()).as("the run read back and the newer one").isEqualTo(2);
        assertThat(speed.prior()).isFalse();
    }

    @Test
    void nothingIsWrittenWhileTheConfigMapCannotBeReadAndPodsThatEndedMeanwhileAreLearnedAfter() {
        var learned = LearnedStateCodec.toJson(LearnedThroughputsConfigMapTest.state("bert", "A100", List.of(3.0)));
        api.client().configMaps().inNamespace(NAMESPACE).resource(new ConfigMapBuilder().withNewMetadata()
                .withName(LearnedThroughputsConfigMap.NAME).endMetadata().addToData(LearnedThroughputsConfigMap.DATA_KEY, learned).build()).create();
        api.writes.clear();
        api.down.set(true);
        var pod = ended("uid-1", "resnet50", 600, 12_000, 60);
        var store = new CopyOnWriteArrayList<Pod>();
        var learning = start(store);
        await().atMost(PATIENCE).until(() -> api.refused.get() >= 1);

        store.add(pod);
        learning.seen(pod);
        assertThat(learning.restored()).isFalse();
        api.down.set(false);

        await().atMost(PATIENCE).until(() -> learning.accepted() == 1);
        assertThat(learning.learner().table().byClass()).containsKeys("bert", "resnet50");
        assertThat(api.writes).as("no write before the read").isEmpty();
    }

    @Test
    void aConfigMapThatHoldsNoStateIsACleanStartAndIsReplacedAtOnce() {
        api.client().configMaps().inNamespace(NAMESPACE).resource(new ConfigMapBuilder().withNewMetadata()
                .withName(LearnedThroughputsConfigMap.NAME).endMetadata().addToData(LearnedThroughputsConfigMap.DATA_KEY, "{not json").build()).create();
        var learning = start(List.of());

        await().atMost(PATIENCE).until(() -> !"{not json".equals(stored().getData().get(LearnedThroughputsConfigMap.DATA_KEY)));
        assertThat(learning.restored()).isTrue();
        assertThat(LearnedStateCodec.fromJson(stored().getData().get(LearnedThroughputsConfigMap.DATA_KEY))).isEqualTo(LearnedState.EMPTY);
    }

    @Test
    void aReplicaWhoseWriteLostTheRaceWritesItsStateOverTheOtherWhenItHasLearnedThroughALaterRun() {
        emptyConfigMap();
        var a = start(List.of());
        var b = start(List.of());
        await().atMost(PATIENCE).until(() -> a.restored() && b.restored());
        var run1 = ended("uid-1", "resnet50", 600, 12_000, 60);
        var run2 = ended("uid-2", "resnet50", 600, 13_200, 3600);
        a.seen(run1);
        b.seen(run1);
        b.seen(run2);
        await().atMost(PATIENCE).until(() -> a.accepted() == 1 && b.accepted() == 2);

        a.close();
        b.close();

        assertThat(stored().getMetadata().getAnnotations()).containsEntry(LearnedThroughputsConfigMap.LEARNED_THROUGH,
                START.plusSeconds(4200).toString());
        assertThat(samples(LearnedStateCodec.fromJson(stored().getData().get(LearnedThroughputsConfigMap.DATA_KEY)))).containsExactly(10.0, 11.0);
    }

    @Test
    void aReplicaWhoseWriteLostTheRaceTakesTheOthersStateWhenItIsAsRecent() {
        emptyConfigMap();
        var a = start(List.of());
        var b = start(List.of());
        await().atMost(PATIENCE).until(() -> a.restored() && b.restored());
        var run1 = ended("uid-1", "resnet50", 600, 12_000, 60);
        var run2 = ended("uid-2", "resnet50", 600, 13_200, 3600);
        a.seen(run1);
        a.seen(run2);
        b.seen(run2);
        await().atMost(PATIENCE).until(() -> a.accepted() == 2 && b.accepted() == 1);
        a.close();
        var afterA = stored().getMetadata().getResourceVersion();

        b.close();

        assertThat(stored().getMetadata().getResourceVersion()).as("left as the other replica wrote it").isEqualTo(afterA);
        assertThat(samples(b.learner().state())).as("and taken by this one").containsExactly(10.0, 11.0);
    }

    @Test
    void podsOfOtherSchedulersAndPodsNamingNoClassTeachNothingAndCountNoRefusal() {
        var learning = start(List.of());
        await().atMost(PATIENCE).until(learning::restored);
        var other = new PodBuilder(ended("uid-1", "resnet50", 600, 12_000, 60)).editSpec().withSchedulerName("default-scheduler").endSpec().build();
        var noClass = new PodBuilder(ended("uid-2", "resnet50", 600, 12_000, 60)).editMetadata().removeFromAnnotations(HetgpuKeys.POD_WORKLOAD)
                .endMetadata().build();
        var tooShort = ended("uid-3", "resnet50", 30, 600, 60);
        learning.seen(other);
        learning.seen(noClass);
        learning.seen(tooShort);
        learning.seen(tooShort);

        await().atMost(PATIENCE).until(() -> learning.refused(ThroughputLearning.RefusalReason.RUN_TIME) == 1);
        assertThat(learning.accepted()).isZero();
        assertThat(java.util.Arrays.stream(ThroughputLearning.RefusalReason.values()).mapToLong(learning::refused).sum())
                .as("the short run once: a pod is judged once").isEqualTo(1);
    }

    @Test
    void beyondThePodsAllowedToWaitTheRestAreDroppedAndCounted() {
        var learning = start(List.of(), RARELY.withMaxPending(0));
        await().atMost(PATIENCE).until(learning::restored);
        learning.seen(ended("uid-1", "resnet50", 600, 12_000, 60));
        assertThat(learning.dropped()).isEqualTo(1);
        assertThat(learning.accepted()).isZero();
    }

    @Test
    void refusalReasonsAreAFixedSetOfLabels() {
        assertThat(ThroughputLearning.RefusalReason.of("run time: 30 s is below the 120 s a measurement needs")).isEqualTo(ThroughputLearning.RefusalReason.RUN_TIME);
        assertThat(ThroughputLearning.RefusalReason.of("outlier: 1e6 per GPU-second…")).isEqualTo(ThroughputLearning.RefusalReason.OUTLIER);
        assertThat(ThroughputLearning.RefusalReason.of("something new")).isEqualTo(ThroughputLearning.RefusalReason.OTHER);
        // PodRun's reasons.
        assertThat(ThroughputLearning.RefusalReason.of("phase \"Failed\": only a pod that succeeded or was evicted is a measurement"))
                .isEqualTo(ThroughputLearning.RefusalReason.PHASE);
        assertThat(ThroughputLearning.RefusalReason.of("hetgpu.io/work: none, and no hetgpu.io/work: line in its termination message"))
                .isEqualTo(ThroughputLearning.RefusalReason.WORK);
        assertThat(ThroughputLearning.RefusalReason.of("containerStatuses[0].state.terminated: none")).isEqualTo(ThroughputLearning.RefusalReason.RUN_TIME);
        assertThat(ThroughputLearning.RefusalReason.RUN_TIME.tag()).isEqualTo("run_time");
    }

    private static List<Double> samples(LearnedState state) {
        return state.classes().stream().flatMap(c -> c.cards().stream()).flatMap(c -> c.namespaces().stream())
                .flatMap(n -> n.throughputsPerGpu().stream()).sorted().toList();
    }

    private void emptyConfigMap() {
        api.client().configMaps().inNamespace(NAMESPACE).resource(new ConfigMapBuilder().withNewMetadata()
                .withName(LearnedThroughputsConfigMap.NAME).endMetadata()
                .addToData(LearnedThroughputsConfigMap.DATA_KEY, LearnedStateCodec.toJson(LearnedState.EMPTY)).build()).create();
    }

    private ConfigMap stored() {
        return api.client().configMaps().inNamespace(NAMESPACE).withName(LearnedThroughputsConfigMap.NAME).get();
    }

    private ThroughputLearning start(List<Pod> pods) {
        return start(pods, RARELY);
    }

    private ThroughputLearning start(List<Pod> pods, ThroughputLearning.Settings settings) {
        var sources = new ThroughputLearning.Sources(Set.of("hetgpu-scheduler"), node -> null,
                (pod, gpus, node) -> new EndedPods.Cards.Model("V100"), pod -> 2, ThroughputLearning.POD_RUNS);
        var learning = new ThroughputLearning(new ThroughputLearner(LearningSettings.DEFAULTS),
                new LearnedThroughputsConfigMap(api.client(), NAMESPACE), sources, settings);
        started.add(learning);
        learning.start(() -> List.copyOf(pods));
        return learning;
    }

    /**
     * A pod of hetgpu-scheduler that succeeded: its container ran {@code seconds}, ending {@code endedAfter} seconds after
     * {@link #START} plus the run, reporting {@code work} on its termination message.
     */
    static Pod ended(String uid, String workload, long seconds, double work, long startedAfter) {
        var started = START.plusSeconds(startedAfter);
        return new PodBuilder().withNewMetadata().withName("train-" + uid).withNamespace("ml").withUid(uid)
                .addToAnnotations(HetgpuKeys.POD_WORKLOAD, workload).endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").withNodeName("dgx-1").addNewContainer().withName("main")
                .withNewResources().addToLimits(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity("2")).endResources().endContainer().endSpec()
                .withNewStatus().withPhase("Succeeded").addNewContainerStatus().withName("main").withNewState().withNewTerminated()
                .withExitCode(0).withReason("Completed").withStartedAt(started.toString()).withFinishedAt(started.plusSeconds(seconds).toString())
                .withMessage("hetgpu.io/work: " + work).endTerminated().endState().endContainerStatus().endStatus().build();
    }

    /** fabric8's CRUD mock server, whose ConfigMap requests can be refused (503) and whose ConfigMap writes are counted. */
    private static final class Api implements AutoCloseable {
        final AtomicBoolean down = new AtomicBoolean();
        final java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
        final List<String> writes = new CopyOnWriteArrayList<>();
        private final KubernetesMockServer server;
        private final KubernetesClient client;

        Api() {
            var dispatcher = new KubernetesCrudDispatcher() {
                @Override
                public synchronized MockResponse dispatch(RecordedRequest request) {
                    if (request.getPath().contains("/configmaps")) {
                        if (down.get()) {
                            refused.incrementAndGet();
                            return new MockResponse().setResponseCode(503).setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                                    + "\"status\":\"Failure\",\"code\":503,\"reason\":\"ServiceUnavailable\",\"message\":\"etcd down\"}");
                        }
                        if (!"GET".equals(request.getMethod())) {
                            writes.add(request.getMethod() + " " + request.getPath());
                        }
                    }
                    return super.dispatch(request);
                }
            };
            server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
            server.init(InetAddress.getLoopbackAddress(), 0);
            // No retries of its own: a refused read is the learner's to retry.
            client = new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(new io.fabric8.kubernetes.client.ConfigBuilder(
                    server.createClient().getConfiguration()).withRequestRetryBackoffLimit(0).build()).build();
        }

        KubernetesClient client() {
            return client;
        }

        @Override
        public void close() {
            client.close();
            server.destroy();
        }
    }
}
