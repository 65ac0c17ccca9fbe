package io.hetgpu.deviceplugin.node;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class NodePatchTest {

    @Test
    void sendsOnlyWhatDiffers() {
        var current = new NodeMetadata(Map.of("hetgpu.io/gpu.count", "8", "hetgpu.io/gpu.model", "P100"),
                Map.of("hetgpu.io/gpu-inventory", "{}"));
        var desired = new NodeMetadata(Map.of("hetgpu.io/gpu.count", "8", "hetgpu.io/gpu.model", "V100"),
                Map.of("hetgpu.io/gpu-inventory", "{}", "hetgpu.io/gpu-free", "{\"devices\":[]}"));

        var patch = NodePatch.between(current, desired, NodeLabels.OWNED);

        assertThat(patch.labels()).containsExactly(Map.entry("hetgpu.io/gpu.model", "V100"));
        assertThat(patch.annotations()).containsExactly(Map.entry("hetgpu.io/gpu-free", "{\"devices\":[]}"));
    }

    @Test
    void isEmptyWhenTheNodeAlreadyHasEverything() {
        var same = new NodeMetadata(Map.of("hetgpu.io/gpu.count", "8"), Map.of("hetgpu.io/gpu-inventory", "{}"));
        var withForeignKeys = new NodeMetadata(Map.of("hetgpu.io/gpu.count", "8", "team", "vision"),
                Map.of("hetgpu.io/gpu-inventory", "{}", "node.alpha.kubernetes.io/ttl", "0"));

        assertThat(NodePatch.between(withForeignKeys, same, NodeLabels.OWNED).isEmpty()).isTrue();
    }

    @Test
    void removesOnlyLabelsThePluginOwns() {
        var current = new NodeMetadata(Map.of("hetgpu.io/gpu.model", "V100", "hetgpu.io/gpu.nvlink", "true",
                "team", "vision", "topology.hetgpu.io/rack", "r1"), Map.of());
        var desired = new NodeMetadata(Map.of("hetgpu.io/gpu.present", "false", "hetgpu.io/gpu.count", "0"), Map.of());

        var patch = NodePatch.between(current, desired, NodeLabels.OWNED);

        var expected = new HashMap<String, String>();
        expected.put("hetgpu.io/gpu.model", null);
        expected.put("hetgpu.io/gpu.nvlink", null);
        expected.put("hetgpu.io/gpu.present", "false");
        expected.put("hetgpu.io/gpu.count", "0");
        assertThat(patch.labels()).containsExactlyInAnyOrderEntriesOf(expected);
        assertThat(patch.body()).isEqualTo(Map.of("metadata", Map.of("labels", patch.labels())));
    }
}
