package io.hetgpu.testcluster.scheduler;

import static io.hetgpu.testcluster.scheduler.ClusterObjects.node;
import static io.hetgpu.testcluster.scheduler.ClusterObjects.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SchedulingCycleTest {

    private final HttpClient http = HttpClient.newHttpClient();
    private final List<Node> nodes = List.of(node("a100-1", 8), node("k80-1", 8), node("cpu-1", 0));
    private FakeExtender extender;

    @BeforeEach
    void start() throws Exception {
        extender = new FakeExtender();
        extender.answer("filter", body -> new FakeExtender.Answer(200, """
                {"Nodes":null,"NodeNames":["a100-1","k80-1"],"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""}"""));
        extender.answer("prioritize", body -> new FakeExtender.Answer(200, """
                [{"Host":"a100-1","Score":10},{"Host":"k80-1","Score":0}]"""));
    }

    @AfterEach
    void stop() {
        extender.close();
    }

    private SchedulingCycle cycle(ExtenderSettings settings) {
        return new SchedulingCycle(List.of(new ExtenderClient(settings, http)), new Random(1));
    }

    private ExtenderSettings settings(boolean nodeCacheCapable, boolean ignorable, List<String> managed) {
        return new ExtenderSettings(extender.urlPrefix(), "filter", "prioritize", "", 5, nodeCacheCapable, ignorable,
                Duration.ofSeconds(2), managed);
    }

    @Test
    void sendsNodeNamesWhenNodeCacheCapableAndNullNodes() {
        cycle(settings(true, false, List.of())).schedule(pod("train", 1, 1000), nodes, Map.of());

        var body = extender.requestsFor("filter").get(0);
        assertThat(body.fieldNames()).toIterable().containsExactlyInAnyOrder("Pod", "Nodes", "NodeNames");
        assertThat(body.get("Nodes").isNull()).isTrue();
        // cpu-1 has no nvidia.com/gpu: kube-scheduler's own resource fit drops it before the extender.
        assertThat(body.get("NodeNames")).extracting(n -> n.asText()).containsExactly("a100-1", "k80-1");
        assertThat(body.get("Pod").get("metadata").get("name").asText()).isEqualTo("train");
        assertThat(body.get("Pod").get("spec").get("containers").get(0).get("resources").get("limits").get("nvidia.com/gpu").asText()).isEqualTo("1");
    }

    @Test
    void sendsFullNodeObjectsWhenNotNodeCacheCapable() {
        extender.answer("filter", body -> new FakeExtender.Answer(200,
                "{\"Nodes\":" + body.get("Nodes") + ",\"NodeNames\":null,\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{},\"Error\":\"\"}"));

        var decision = cycle(settings(false, false, List.of())).schedule(pod("train", 1, 1000), nodes, Map.of());

        var body = extender.requestsFor("filter").get(0);
        assertThat(body.get("NodeNames").isNull()).isTrue();
        assertThat(body.get("Nodes").get("items").get(0).get("status").get("allocatable").get("nvidia.com/gpu").asText()).isEqualTo("8");
        assertThat(decision).isInstanceOf(Decision.Bound.class);
    }

    @Test
    void addsExtenderScoresTimesWeightTimesTen() {
        var decision = (Decision.Bound) cycle(settings(true, false, List.of())).schedule(pod("train", 1, 1000), nodes, Map.of());

        assertThat(decision.node()).isEqualTo("a100-1");
        // Both nodes are equally empty, so the default scores cancel: the gap is 10 x weight 5 x 10.
        assertThat(decision.totals().get("a100-1") - decision.totals().get("k80-1")).isEqualTo(500);
    }

    @Test
    void skipsPrioritizeWhenOneNodeIsLeft() {
        extender.answer("filter", body -> new FakeExtender.Answer(200, """
                {"NodeNames":["k80-1"],"FailedNodes":{"a100-1":"1 free A100, pod needs 2"},"Error":""}"""));

        var decision = cycle(settings(true, false, List.of())).schedule(pod("train", 1, 1000), nodes, Map.of());

        assertThat(decision).isEqualTo(new Decision.Bound("default/train", "k80-1", Map.of("k80-1", 0L), Map.of("k80-1", 0L)));
        assertThat(extender.requestsFor("prioritize")).isEmpty();
    }

    @Test
    void filterErrorFailsTheAttemptUnlessIgnorable() {
        extender.answer("filter", body -> new FakeExtender.Answer(200, "{\"Error\":\"cluster state not synced\"}"));

        assertThat(cycle(settings(true, false, List.of())).schedule(pod("train", 1, 1000), nodes, Map.of()))
                .isInstanceOfSatisfying(Decision.Failed.class, failed -> assertThat(failed.error()).endsWith("cluster state not synced"));
        assertThat(cycle(settings(true, true, List.of())).schedule(pod("train", 1, 1000), nodes, Map.of()))
                .isInstanceOf(Decision.Bound.class);
    }

    @Test
    void unreachableExtenderCountsAsFailure() {
        var down = new ExtenderSettings("http://127.0.0.1:1/hetgpu", "filter", "prioritize", "", 1, true, false,
                Duration.ofMillis(500), List.of());

        assertThat(cycle(down).schedule(pod("train", 1, 1000), nodes, Map.of())).isInstanceOf(Decision.Failed.class);
        assertThat(cycle(down.withIgnorable(true)).schedule(pod("train", 1, 1000), nodes, Map.of())).isInstanceOf(Decision.Bound.class);
    }

    @Test
    void httpErrorStatusIsAFailedPrioritizeThatIsDropped() {
        extender.answer("prioritize", body -> new FakeExtender.Answer(500, "boom"));

        assertThat(cycle(settings(true, false, List.of())).schedule(pod("train", 1, 1000), nodes, Map.of()))
                .isInstanceOf(Decision.Bound.class);
    }

    @Test
    void managedResourcesKeepCpuPodsAwayFromTheExtender() {
        cycle(settings(true, false, List.of("nvidia.com/gpu"))).schedule(pod("serve", 0, 0), nodes, Map.of());

        assertThat(extender.requests).isEmpty();
    }

    @Test
    void unschedulableMessageCountsReasonsLikeKubeScheduler() {
        extender.answer("filter", body -> new FakeExtender.Answer(200, """
                {"NodeNames":[],"FailedNodes":{"a100-1":"2 free A100, pod needs 4 with NVLink"},
                 "FailedAndUnresolvableNodes":{"k80-1":"pod wants A100 or H100, node has K80"},"Error":""}"""));

        var decision = cycle(settings(true, false, List.of())).schedule(pod("train", 4, 1000), nodes, Map.of());

        assertThat(decision).isInstanceOfSatisfying(Decision.Unschedulable.class, u -> assertThat(u.message()).isEqualTo(
                "0/3 nodes are available: 1 2 free A100, pod needs 4 with NVLink, 1 Insufficient nvidia.com/gpu, "
                        + "1 pod wants A100 or H100, node has K80."));
    }
}
