package io.hetgpu.extender.http;

import io.hetgpu.extender.wire.AlikeRefusal;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.http.WireCluster.Form;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One caller's request costs an answer of about its own size: a pod-level reason is given once, not once per node,
 * quoted values are cut, and a node's reason has a cap, so that even an answer refusing every node stays within a
 * fixed number of bytes per node named (README, "What one caller can hold").
 */
class OneCallerBytesTest {

    private static final int NODES = 5_000;
    private static final String HUGE = "x".repeat(250_000);

    @ParameterizedTest
    @EnumSource(Form.class)
    void aPodWhoseRequestCannotBeReadIsRefusedOnceWithTheValueCut(Form form) {
        var nodes = new ArrayList<String>();
        var dgx = TestTopologies.dgx1V100("gpu");
        for (int i = 0; i < NODES; i++) {
            nodes.add(WireCluster.node("gpu-" + i, TestTopologies.inventory(dgx), TestTopologies.allFree(dgx), "8"));
        }
        var pod = WireCluster.GPU_POD.replace("\"sidecar.istio.io/inject\": \"false\"", "\"hetgpu.io/priority\": \"" + HUGE + "\"");
        try (var cluster = new WireCluster(form, nodes)) {
            var filter = cluster.ask("filter", pod);

            assertThat(filter.status()).isEqualTo(200);
            var unresolvable = filter.body().get("FailedAndUnresolvableNodes");
            assertThat(unresolvable.size()).as("the pod's reason once, not once per node").isEqualTo(1);
            assertThat(unresolvable.get("gpu-0").asText()).isEqualTo("pod ml-team/resnet-train-worker-1 cannot be placed: "
                    + "hetgpu.io/priority: expected one of high, normal, low, got \"" + "x".repeat(64) + "…\"(250000 bytes)");
            assertThat(filter.body().get("FailedNodes").size()).isZero();
            assertThat(filter.bytes()).as("an answer of a few hundred bytes, whatever the annotation's size").isLessThan(1_000);

            var scores = cluster.ask("prioritize", pod);
            assertThat(scores.status()).isEqualTo(200);
            assertThat(scores.bytes()).as("scores, no reasons: the request's names and a number each")
                    .isLessThan(scores.requestBytes() - HUGE.length() + 20L * NODES);
        }
    }

    /**
     * The worst case: every node refused for its own long reason (an inventory that cannot be read, quoting long values,
     * with the notes of the sources tried after it). Each reason is cut to its cap, so each node costs its name and at
     * most the cap; measured here against the request, in both forms.
     */
    @ParameterizedTest
    @EnumSource(Form.class)
    void anAnswerRefusingEveryNodeStaysWithinAFixedSizePerNode(Form form) {
        var nodes = new ArrayList<String>();
        var names = new ArrayList<String>();
        for (int i = 0; i < NODES; i++) {
            var name = "n" + i;
            names.add(name);
            var inventory = "{\"schema\":1,\"devices\":[{\"id\":\"" + "d".repeat(400) + "\",\"family\":\"" + "f".repeat(400) + "\"}]}";
            nodes.add(WireCluster.node(name, Map.of(), Map.of("hetgpu.io/gpu-inventory", inventory,
                    "hetgpu.io/gpu-free", "{\"devices\":" + "[".repeat(40) + "}"), "lots " + "y".repeat(400)));
        }
        try (var cluster = new WireCluster(form, nodes)) {
            var filter = cluster.ask("filter", WireCluster.GPU_POD, names);

            assertThat(filter.status()).isEqualTo(200);
            var refused = new ArrayList<String>();
            filter.body().get("FailedAndUnresolvableNodes").properties().forEach(entry -> refused.add(entry.getValue().asText()));
            filter.body().get("FailedNodes").properties().forEach(entry -> refused.add(entry.getValue().asText()));
            // Every node refused, each named or stood for by a reason given once for all the nodes refused alike.
            assertThat(refused.stream().mapToInt(AlikeRefusal::nodes).sum()).isEqualTo(NODES);
            assertThat(refused.getFirst()).as("long enough to be cut").contains("bytes)");
            // Each node: its name, the reason (at most the cap and the cut's suffix), quotes, a colon and a comma.
            long perNode = 300 + "…(100000 bytes)".length() + 6;
            long names5000 = names.stream().mapToLong(String::length).sum();
            assertThat(filter.bytes()).isLessThanOrEqualTo(names5000 + NODES * perNode + 200);
            System.out.printf("every node refused, %s form: request %d bytes, answer %d bytes (%.1f per node)%n", form,
                    filter.requestBytes(), filter.bytes(), (double) filter.bytes() / NODES);
        }
    }

}
