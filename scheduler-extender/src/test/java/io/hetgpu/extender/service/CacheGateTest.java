package io.hetgpu.extender.service;

import io.hetgpu.extender.RequestOnlyVerbs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.ListingClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.PodBinder;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.ExtenderBindingArgs;
import io.hetgpu.extender.wire.ExtenderPreemptionArgs;
import io.hetgpu.extender.wire.ExtenderPreemptionArgs.MetaPod;
import io.hetgpu.extender.wire.ExtenderPreemptionArgs.MetaVictims;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * No verb before the caches: asked while the cluster view has not listed yet, each verb refuses, saying the extender is
 * waiting for its caches, and does nothing else (no scores reported, no preemption advice, not one API call for a bind).
 */
class CacheGateTest {

    private static final CardCatalog CATALOG = CardCatalog.defaults();

    /** A view whose informers have not listed yet, over a node it would otherwise judge. */
    private final ListingClusterView cluster = new ListingClusterView(NodeSnapshot.of(List.of(new NodeFacts("dgx-1", "1", Map.of(),
            TestTopologies.inventory(TestTopologies.dgx1V100("dgx-1")), TestTopologies.allFree(TestTopologies.dgx1V100("dgx-1")))),
            Map.of()));
    private final List<String> happened = new CopyOnWriteArrayList<>();
    /** Any call here is an API request the verb should not have made. */
    private final PodBinder binder = new PodBinder() {
        @Override
        public Pod pod(String namespace, String name) {
            happened.add("read pod " + name);
            return null;
        }

        @Override
        public void annotate(String namespace, String name, String resourceVersion, String key, String value) {
            happened.add("annotate " + name);
        }

        @Override
        public void removeAnnotation(String namespace, String name, String key, String value) {
            happened.add("remove " + name);
        }

        @Override
        public void bind(String namespace, String name, String uid, String node) {
            happened.add("bind " + name);
        }
    };
    private final ExtenderVerbs verbs = ExtenderVerbs.of(cluster, new PodRequestParser("nvidia.com/gpu", CATALOG),
            new NodeStateFactory(CATALOG, "topology.hetgpu.io/rack"), new PlacementPolicy(PolicySettings.DEFAULTS),
            (pod, table) -> happened.add("scored " + pod.name()), advice -> happened.add("advised " + advice.pod().name()),
            binder, report -> happened.add("bind report " + report.outcome()));

    private final Pod pod = KubeJson.trainingPod();
    private final ExtenderArgs dgx = new ExtenderArgs(pod, null, List.of("dgx-1"));

    @Test
    void everyVerbRefusesBeforeTheCachesHaveSyncedAndDoesNothingElse() {
        var filter = verbs.service().filter(dgx);
        assertThat(filter.error()).startsWith(ClusterView.WAITING);
        assertThat(filter.nodeNames()).isNull();

        assertThatThrownBy(() -> verbs.service().prioritize(dgx))
                .isInstanceOf(CacheGate.NotSynced.class).hasMessageStartingWith(ClusterView.WAITING);

        var victims = Map.of("dgx-1", new MetaVictims(List.of(new MetaPod("uid-victim")), 0));
        assertThatThrownBy(() -> verbs.preemption().answer(new ExtenderPreemptionArgs(pod, null, victims)))
                .isInstanceOf(CacheGate.NotSynced.class).hasMessageStartingWith(ClusterView.WAITING);

        var bind = verbs.binding().bind(new ExtenderBindingArgs(pod.getMetadata().getName(), "default", "uid-1", "dgx-1"));
        assertThat(bind.bound()).isFalse();
        assertThat(bind.error()).startsWith(ClusterView.WAITING);

        assertThat(happened).as("scores reported, advice given, API calls made").isEmpty();
        assertThat(CacheGate.VERBS).allSatisfy(verb -> assertThat(verbs.gate().refused(verb)).as(verb).isEqualTo(1));
        assertThat(verbs.gate().notReady()).hasValueSatisfying(reason -> assertThat(reason).startsWith(ClusterView.WAITING));
    }

    @Test
    void onceSyncedTheVerbsAnswer() {
        verbs.service().filter(dgx);
        cluster.finishListing();

        var filter = verbs.service().filter(dgx);
        assertThat(filter.error()).isEmpty();
        assertThat(filter.nodeNames()).containsExactly("dgx-1");
        assertThat(verbs.service().prioritize(dgx).priorities()).hasSize(1);
        assertThat(verbs.gate().notReady()).isEmpty();
        assertThat(verbs.gate().refused("filter")).isEqualTo(1);
    }

    @Test
    void withoutAnApiServerThereAreNoCachesToWaitFor() {
        var requestOnly = RequestOnlyVerbs.create();

        assertThat(requestOnly.gate().notReady()).isEmpty();
        assertThat(requestOnly.gate().wedged()).isEmpty();
        // Answered at once (NodeNames need a node cache, which is why it says so rather than waiting for one).
        assertThat(requestOnly.service().filter(dgx).error()).isEqualTo(ExtenderService.NO_NODE_CACHE);
    }
}
