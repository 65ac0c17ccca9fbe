package io.hetgpu.extender.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.http.WireWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeReasonsTest {

    @Test
    void isAnOrderedMapEqualToTheHashMapItReplaces() {
        var builder = NodeReasons.builder(1);
        var expected = new LinkedHashMap<String, String>();
        for (int i = 0; i < 10; i++) {
            builder.put("node-" + (9 - i), "reason " + i);
            expected.put("node-" + (9 - i), "reason " + i);
        }

        var reasons = builder.build();

        assertThat(reasons).containsExactlyEntriesOf(expected).isEqualTo(expected);
        assertThat(reasons.get("node-3")).isEqualTo("reason 6");
        assertThat(reasons.get("ghost")).isNull();
        var order = new StringBuilder();
        reasons.forEach((name, reason) -> order.append(name.charAt(5)));
        assertThat(order).hasToString("9876543210");
    }

    @Test
    void isWrittenLikeAnyOtherMap() {
        var writer = new WireWriter();
        var reasons = NodeReasons.builder(2).put("a", "1 free V100, pod needs 4").put("b\"", "no GPUs").build();
        var plain = new LinkedHashMap<>(reasons);

        var fromArrays = writer.filterResult(new FilterResult(null, java.util.List.of("c"), reasons, Map.of(), "")).toString();
        var fromHashMap = writer.filterResult(new FilterResult(null, java.util.List.of("c"), plain, Map.of(), "")).toString();

        assertThat(fromArrays).isEqualTo(fromHashMap)
                .contains("\"FailedNodes\":{\"a\":\"1 free V100, pod needs 4\",\"b\\\"\":\"no GPUs\"}");
    }
}
