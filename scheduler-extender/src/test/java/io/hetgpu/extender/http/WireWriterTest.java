package io.hetgpu.extender.http;

import io.hetgpu.extender.wire.AlikeRefusal;
import io.hetgpu.extender.wire.FilterResult;
import io.hetgpu.extender.wire.HostPriority;
import io.hetgpu.extender.wire.NodeReasons;
import io.hetgpu.extender.wire.RequestedNames;
import io.hetgpu.extender.wire.RequestedPriorities;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WireWriterTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final WireWriter writer = new WireWriter();

    @Test
    void filterAnswerHasTheGoFieldNamesAndEscapesEveryString() throws Exception {
        var failed = new LinkedHashMap<String, String>();
        failed.put("gpu-1", "node has 8 \"V100\" \\ 16 GiB\nnext line, tab\t, é, 漢");
        failed.put("gpu-2", "no set of 4 free GPUs");
        var result = new FilterResult(null, List.of("gpu-3", "gpu-4"), failed, Map.of("gpu-5", "node has no GPUs"), "");

        // Written twice: the second answer comes from the escaped strings kept from the first.
        for (int i = 0; i < 2; i++) {
            var answer = JSON.readTree(writer.filterResult(result).getBytes());
            assertThat(answer.get("Nodes").isNull()).isTrue();
            assertThat(answer.get("NodeNames")).extracting(JsonNode::asText).containsExactly("gpu-3", "gpu-4");
            assertThat(JSON.convertValue(answer.get("FailedNodes"), Map.class)).containsExactlyEntriesOf(failed);
            assertThat(answer.get("FailedAndUnresolvableNodes").get("gpu-5").asText()).isEqualTo("node has no GPUs");
            assertThat(answer.get("Error").asText()).isEmpty();
        }
    }

    @Test
    void anErrorAnswerCarriesTheMessage() throws Exception {
        var message = "bad \"Pod\": " + "x".repeat(5_000);
        var answer = JSON.readTree(writer.filterResult(FilterResult.error(message)).getBytes());
        assertThat(answer.get("NodeNames").isNull()).isTrue();
        assertThat(answer.get("FailedNodes").size()).isZero();
        assertThat(answer.get("Error").asText()).isEqualTo(message);
        assertThat(JSON.readTree(writer.error(message).getBytes()).get("Error").asText()).isEqualTo(message);
    }

    @Test
    void prioritiesAreABareArrayOfHostAndScore() throws Exception {
        var answer = JSON.readTree(writer.hostPriorities(List.of(new HostPriority("a", 0), new HostPriority("b", 10),
                new HostPriority("c", 42))).getBytes());
        assertThat(answer.toString()).isEqualTo("[{\"Host\":\"a\",\"Score\":0},{\"Host\":\"b\",\"Score\":10},{\"Host\":\"c\",\"Score\":42}]");
        assertThat(new String(writer.hostPriorities(List.of()).getBytes())).isEqualTo("[]");
    }

    @Test
    void namesARequestSentAsBytesAreAnsweredAsTheSameBytes() throws Exception {
        var reader = new ExtenderArgsReader(ExtenderArgsReader.kubernetesMapper());
        var asked = (RequestedNames) reader.read(("{\"Pod\":{},\"NodeNames\":[\"gpu-1\",\"g\\u0070u-2\",\"gpu-3\"]}")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8)).nodeNames();

        var kept = asked.subset(new int[] {1, 2}, 2);
        var raw = new String(writer.filterResult(new FilterResult(null, kept, Map.of(), Map.of(), "")).getBytes(),
                java.nio.charset.StandardCharsets.UTF_8);
        // The escaped name goes back escaped, as kube-scheduler wrote it: the same JSON string.
        assertThat(raw).contains("\"NodeNames\":[\"g\\u0070u-2\",\"gpu-3\"]");
        assertThat(JSON.readTree(raw).get("NodeNames")).extracting(JsonNode::asText).containsExactly("gpu-2", "gpu-3");

        var priorities = new RequestedPriorities(asked, 2);
        priorities.add(0, 7);
        priorities.add("ghost", 0);
        assertThat(JSON.readTree(writer.hostPriorities(priorities).getBytes()).toString())
                .isEqualTo("[{\"Host\":\"gpu-1\",\"Score\":7},{\"Host\":\"ghost\",\"Score\":0}]");
    }

    @Test
    void refusedNodesARequestSentAsBytesAreAnsweredAsTheSameBytesWithTheirReasons() throws Exception {
        var reader = new ExtenderArgsReader(ExtenderArgsReader.kubernetesMapper());
        var asked = (RequestedNames) reader.read(("{\"Pod\":{},\"NodeNames\":[\"gpu-1\",\"g\\u0070u-2\",\"gpu-3\"]}")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8)).nodeNames();
        var tooFew = "no set of 4 free \"V100\" GPUs";
        var failed = NodeReasons.builder(3, asked).put("gpu-2", tooFew, 1).put("gpu-3", tooFew, 2)
                .put("ghost", "node unknown", -1).build();

        var raw = new String(writer.filterResult(new FilterResult(null, asked.subset(new int[] {0}, 1), failed, Map.of(), "")).getBytes(),
                java.nio.charset.StandardCharsets.UTF_8);
        // The escaped name goes back escaped, as kube-scheduler wrote it; a name from elsewhere is encoded.
        assertThat(raw).contains("\"FailedNodes\":{\"g\\u0070u-2\":\"no set of 4 free \\\"V100\\\" GPUs\",\"gpu-3\":");
        assertThat(JSON.convertValue(JSON.readTree(raw).get("FailedNodes"), Map.class))
                .containsExactly(Map.entry("gpu-2", tooFew), Map.entry("gpu-3", tooFew), Map.entry("ghost", "node unknown"));
    }

    @Test
    void unresolvableRefusalsGoOncePerReasonSayingHowManyNodesTheyStandForAndTheOthersEachWithTheirOwn() throws Exception {
        var unresolvable = new LinkedHashMap<String, String>();
        unresolvable.put("k80-1", "node has 4 K80, pod needs A100");
        unresolvable.put("t4-1", "node has 4 T4, pod needs A100");
        unresolvable.put("k80-2", "node has 4 K80, pod needs A100");
        unresolvable.put("k80-3", "node has 4 K80, pod needs A100");
        var failed = new LinkedHashMap<String, String>();
        failed.put("a100-1", "2 free A100, pod needs 4");
        failed.put("a100-2", "2 free A100, pod needs 4");

        var answer = JSON.readTree(writer.filterResult(new FilterResult(null, List.of("h100-1"), failed, unresolvable, "")).getBytes());

        assertThat(JSON.convertValue(answer.get("FailedAndUnresolvableNodes"), Map.class)).containsExactly(
                Map.entry("k80-1", "node has 4 K80, pod needs A100 (and 2 more nodes alike, not listed)"),
                Map.entry("t4-1", "node has 4 T4, pod needs A100"));
        // Preemption may fix these: kube-scheduler looks for victims only on the nodes named, so each is.
        assertThat(JSON.convertValue(answer.get("FailedNodes"), Map.class)).containsExactlyEntriesOf(failed);
        assertThat(AlikeRefusal.nodes(answer.get("FailedAndUnresolvableNodes").get("k80-1").asText())).isEqualTo(3);
        assertThat(AlikeRefusal.nodes(answer.get("FailedAndUnresolvableNodes").get("t4-1").asText())).isEqualTo(1);
    }
}
