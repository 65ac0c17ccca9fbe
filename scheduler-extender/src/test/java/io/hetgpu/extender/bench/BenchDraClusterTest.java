package io.hetgpu.extender.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.http.ExtenderArgsReader;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.service.ExtenderService;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.extender.wire.HostPriority;
import io.hetgpu.gpu.tier.CardCatalog;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The extender benchmark's DRA cluster asks of the extender what its device-plugin cluster asks: the DRA pod is kept on
 * the nodes its device-plugin twin is kept on, refused where it is, and scored on the same nodes, so that the two forms'
 * times compare the same work read from different objects.
 */
class BenchDraClusterTest {

    private static final int NODES = 300;
    private static BenchCluster plugin;
    private static BenchDraCluster dra;
    private static ExtenderService service;
    private static final ExtenderArgsReader READER = new ExtenderArgsReader(ExtenderArgsReader.kubernetesMapper());

    @BeforeAll
    static void bothClustersInOneExtender() {
        plugin = new BenchCluster(NODES, 42);
        dra = new BenchDraCluster(NODES, 42);
        var catalog = CardCatalog.defaults();
        service = ExtenderVerbs.of(dra.view(plugin), new PodRequestParser("nvidia.com/gpu", catalog).withDra(dra.dra),
                new NodeStateFactory(catalog, "topology.hetgpu.io/rack"), new PlacementPolicy(PolicySettings.DEFAULTS), (pod, table) -> { })
                .service();
    }

    @Test
    void theDraPodIsKeptAndRefusedAsItsDevicePluginTwin() throws Exception {
        var pluginPod = BenchDraCluster.pluginPod(BenchJob.TRAINING);
        var draPod = BenchDraCluster.draPod(BenchJob.TRAINING);
        var kept = service.filter(READER.read(body(pluginPod, plugin.names))).nodeNames();
        var draKept = service.filter(READER.read(body(draPod, dra.names))).nodeNames();

        assertThat(kept).as("some nodes fit 4 free cards of the models asked, and some do not").isNotEmpty().hasSizeLessThan(NODES / 2);
        assertThat(draKept).containsExactlyElementsOf(twins(kept));
        // Scored on the same nodes; not to the same points: the device-plugin nodes' links are known, and NVIDIA's driver
        // publishes none, and no eviction frees the GPUs the DRA nodes' claims hold.
        assertThat(scores(draPod, draKept).keySet()).isEqualTo(twins(scores(pluginPod, kept)).keySet());
    }

    @Test
    void theDraPodsClaimIsReadAsTheDevicePluginPodsAnnotationsAndLimits() throws Exception {
        var parser = new PodRequestParser("nvidia.com/gpu", CardCatalog.defaults()).withDra(dra.dra);
        var fromClaim = parser.parse(io.hetgpu.extender.KubeJson.MAPPER.convertValue(json(BenchDraCluster.draPod(BenchJob.TRAINING)),
                io.fabric8.kubernetes.api.model.Pod.class));
        var fromLimits = parser.parse(io.hetgpu.extender.KubeJson.MAPPER.convertValue(json(BenchDraCluster.pluginPod(BenchJob.TRAINING)),
                io.fabric8.kubernetes.api.model.Pod.class));

        assertThat(fromClaim.gpuCount()).isEqualTo(4).isEqualTo(fromLimits.gpuCount());
        assertThat(fromClaim.cards()).isEqualTo(fromLimits.cards());
        assertThat(fromClaim.claimNote()).as("every clause of the selector read").isEmpty();
    }

    private static Map<String, Integer> scores(String pod, List<String> names) throws Exception {
        return service.prioritize(READER.read(body(pod, names))).priorities().stream()
                .collect(Collectors.toMap(HostPriority::host, HostPriority::score));
    }

    private static List<String> twins(List<String> names) {
        return names.stream().map(BenchDraClusterTest::twin).toList();
    }

    private static Map<String, Integer> twins(Map<String, Integer> scores) {
        return scores.entrySet().stream().collect(Collectors.toMap(entry -> twin(entry.getKey()), Map.Entry::getValue));
    }

    private static String twin(String pluginNode) {
        return BenchDraCluster.PREFIX + pluginNode.substring("node-".length());
    }

    private static byte[] body(String pod, List<String> names) {
        return ("{\"Pod\":" + pod + ",\"Nodes\":null,\"NodeNames\":" + BenchCluster.json(names) + "}").getBytes(StandardCharsets.UTF_8);
    }

    private static com.fasterxml.jackson.databind.JsonNode json(String text) {
        try {
            return io.hetgpu.extender.KubeJson.MAPPER.readTree(text);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
