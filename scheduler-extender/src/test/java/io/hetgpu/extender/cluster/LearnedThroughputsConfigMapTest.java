package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.hetgpu.extender.BindingApiServer;
import io.hetgpu.extender.throughput.LearnedState;
import io.hetgpu.extender.throughput.LearnedStateCodec;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The ConfigMap the learned state is kept in: read, created, updated only over the version read, and bounded. */
class LearnedThroughputsConfigMapTest {

    private static final String NAMESPACE = "hetgpu-system";
    private static final Instant T1 = Instant.parse("2026-11-28T04:00:00Z");

    @Test
    void absentAtFirstThenReadBackAsWritten() {
        try (var api = BindingApiServer.start()) {
            var store = new LearnedThroughputsConfigMap(api.client(), NAMESPACE);
            assertThat(store.read()).isInstanceOf(LearnedThroughputsConfigMap.Stored.Absent.class);

            var json = LearnedStateCodec.toJson(state("resnet50", "V100", List.of(10.0, 11.0)));
            var written = store.write(json, T1, Optional.empty());

            assertThat(written).isInstanceOf(LearnedThroughputsConfigMap.Written.Done.class);
            assertThat(store.read()).isInstanceOfSatisfying(LearnedThroughputsConfigMap.Stored.Found.class, found -> {
                assertThat(found.state()).isEqualTo(state("resnet50", "V100", List.of(10.0, 11.0)));
                assertThat(found.learnedThrough()).isEqualTo(T1);
                assertThat(found.resourceVersion()).isEqualTo(((LearnedThroughputsConfigMap.Written.Done) written).resourceVersion());
            });
        }
    }

    @Test
    void anUpdateOverAVersionAnotherWriterReplacedIsAConflictAndChangesNothing() {
        try (var api = BindingApiServer.start()) {
            var store = new LearnedThroughputsConfigMap(api.client(), NAMESPACE);
            var first = (LearnedThroughputsConfigMap.Written.Done) store.write(LearnedStateCodec.toJson(LearnedState.EMPTY), T1, Optional.empty());
            var theirs = LearnedStateCodec.toJson(state("bert", "A100", List.of(3.0)));
            assertThat(store.write(theirs, T1.plusSeconds(60), Optional.of(first.resourceVersion())))
                    .isInstanceOf(LearnedThroughputsConfigMap.Written.Done.class);

            var stale = store.write(LearnedStateCodec.toJson(state("resnet50", "V100", List.of(1.0))), T1.plusSeconds(120),
                    Optional.of(first.resourceVersion()));

            assertThat(stale).isInstanceOf(LearnedThroughputsConfigMap.Written.Conflict.class);
            assertThat(((LearnedThroughputsConfigMap.Stored.Found) store.read()).state()).isEqualTo(state("bert", "A100", List.of(3.0)));
            // A create where one exists is a conflict too: two replicas that both found none.
            assertThat(store.write(LearnedStateCodec.toJson(LearnedState.EMPTY), T1, Optional.empty()))
                    .isInstanceOf(LearnedThroughputsConfigMap.Written.Conflict.class);
        }
    }

    @Test
    void anUpdateOfAConfigMapDeletedMeanwhileMakesItAgain() {
        try (var api = BindingApiServer.start()) {
            var store = new LearnedThroughputsConfigMap(api.client(), NAMESPACE);
            var first = (LearnedThroughputsConfigMap.Written.Done) store.write(LearnedStateCodec.toJson(LearnedState.EMPTY), T1, Optional.empty());
            api.client().configMaps().inNamespace(NAMESPACE).withName(LearnedThroughputsConfigMap.NAME).delete();

            assertThat(store.write(LearnedStateCodec.toJson(state("bert", "A100", List.of(3.0))), T1, Optional.of(first.resourceVersion())))
                    .isInstanceOf(LearnedThroughputsConfigMap.Written.Done.class);
            assertThat(store.read()).isInstanceOf(LearnedThroughputsConfigMap.Stored.Found.class);
        }
    }

    @Test
    void aConfigMapThatHoldsNoStateIsUnusableWithTheFieldNamed() {
        try (var api = BindingApiServer.start()) {
            var maps = api.client().configMaps().inNamespace(NAMESPACE);
            maps.resource(new ConfigMapBuilder().withNewMetadata().withName(LearnedThroughputsConfigMap.NAME).endMetadata()
                    .addToData("other", "x").build()).create();
            var store = new LearnedThroughputsConfigMap(api.client(), NAMESPACE);
            assertThat(store.read()).isInstanceOfSatisfying(LearnedThroughputsConfigMap.Stored.Unusable.class,
                    bad -> assertThat(bad.reason()).isEqualTo("data.throughputs.json missing"));

            maps.withName(LearnedThroughputsConfigMap.NAME).edit(map -> new ConfigMapBuilder(map)
                    .addToData(LearnedThroughputsConfigMap.DATA_KEY, "{\"schema\": 2}").build());
            assertThat(store.read()).isInstanceOfSatisfying(LearnedThroughputsConfigMap.Stored.Unusable.class,
                    bad -> assertThat(bad.reason()).isEqualTo("data.throughputs.json: schema: expected 1, got \"2\""));
        }
    }

    @Test
    void anUnreadableLearnedThroughIsTheEpochSoRunsCountAgainRatherThanNever() {
        assertThat(LearnedThroughputsConfigMap.learnedThrough(java.util.Map.of(LearnedThroughputsConfigMap.LEARNED_THROUGH, "yesterday")))
                .isEqualTo(Instant.EPOCH);
        assertThat(LearnedThroughputsConfigMap.learnedThrough(null)).isEqualTo(Instant.EPOCH);
    }

    static LearnedState state(String workload, String card, List<Double> throughputs) {
        return new LearnedState(List.of(new LearnedState.ClassSamples(workload, List.of(new LearnedState.CardSamples(card,
                List.of(new LearnedState.NamespaceSamples("team-a", throughputs)))))));
    }
}
