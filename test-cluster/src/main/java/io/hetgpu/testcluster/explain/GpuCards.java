package io.hetgpu.testcluster.explain;

import io.hetgpu.extender.ExtenderSetup;
import io.hetgpu.extender.cluster.ClusterView;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.stream.Collectors;

/** What a pod's devices are, by model, as the node's inventory names them: "8x H100", "2x A100 + 1x T4". */
final class GpuCards {

    private GpuCards() {
    }

    static String of(ExtenderSetup setup, ClusterView view, String node, List<String> devices) {
        var facts = view.node(node);
        if (facts == null || devices.isEmpty()) {
            return "";
        }
        var topology = setup.nodeStates().state(facts, List.of()).gpus().topology();
        var byModel = new LinkedHashMap<String, Integer>();
        for (var device : devices) {
            var model = topology.positionOf(device).map(position -> topology.device(position).model()).orElse("GPU");
            byModel.merge(model, 1, Integer::sum);
        }
        return byModel.entrySet().stream().map(entry -> entry.getValue() + "x " + entry.getKey()).collect(Collectors.joining(" + "));
    }
}
