package io.hetgpu.extender.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.TestDra;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.ListedDra;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.SnapshotClusterView;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;

/**
 * {@link BenchCluster}'s cluster as a DRA cluster has it: the same node types and the same GPUs free per node for the same
 * seed, but no GPU annotations, labels or allocatable count on the Node. Each GPU node publishes its GPUs only in one
 * ResourceSlice of NVIDIA's driver ({@code gpu.nvidia.com}, as its kubelet plugin names a whole GPU's attributes), and the
 * GPUs that are not free are held by one allocated claim per node, reserved for a pod. The measured pod asks its GPUs
 * through a claim its template made, of the class {@code gpu.nvidia.com} with a selector of product names.
 */
final class BenchDraCluster {

    /** The DRA nodes' names are this and the number: apart from the device-plugin cluster's, so that one extender holds both. */
    static final String PREFIX = "dra-";
    static final String NAMESPACE = "ml-team";
    /** The claim the resourceclaim controller made from the pod's template, as {@code status.resourceClaimStatuses} names it. */
    static final String CLAIM = "resnet-train-worker-1-gpus-x7k2p";
    /** The claim's selector: the same cards the device-plugin pod names in {@code hetgpu.io/gpu-models}. */
    static final String SELECTOR = "device.attributes['gpu.nvidia.com'].productName in ['Tesla V100-SXM2-16GB', 'Tesla V100-PCIE-32GB', "
            + "'NVIDIA A100-SXM4-80GB', 'NVIDIA H100 80GB HBM3']";

    final List<String> names = new ArrayList<>();
    final List<String> nodeJson = new ArrayList<>();
    final Map<String, NodeFacts> facts = new HashMap<>();
    final ListedDra dra;

    BenchDraCluster(int size, long seed) {
        var template = (ObjectNode) KubeJson.read("node-dgx1-v100.json", JsonNode.class);
        var random = new Random(seed);
        var slices = new ArrayList<ResourceSlice>();
        var claims = new ArrayList<ResourceClaim>();
        claims.add(TestDra.claim(NAMESPACE, CLAIM, TestDra.exactly("gpus", TestDra.NVIDIA, 4, SELECTOR)));
        for (int i = 0; i < size; i++) {
            var name = String.format("%s%05d", PREFIX, i);
            var node = template.deepCopy();
            var metadata = (ObjectNode) node.get("metadata");
            metadata.put("name", name);
            metadata.put("uid", java.util.UUID.nameUUIDFromBytes(name.getBytes()).toString());
            metadata.put("resourceVersion", Integer.toString(1000 + i));
            var labels = (ObjectNode) metadata.get("labels");
            labels.put("kubernetes.io/hostname", name);
            labels.put("topology.hetgpu.io/rack", "rack-" + (i / 20));
            labels.put("topology.kubernetes.io/zone", "zone-" + (i / 1000));
            var gpuLabels = new ArrayList<String>();
            labels.fieldNames().forEachRemaining(key -> {
                if (key.startsWith("hetgpu.io/gpu")) {
                    gpuLabels.add(key);
                }
            });
            labels.remove(gpuLabels);
            ((ObjectNode) metadata.get("annotations")).remove(List.of("hetgpu.io/gpu-inventory", "hetgpu.io/gpu-free"));
            for (var field : List.of("allocatable", "capacity")) {
                ((ObjectNode) node.get("status").get(field)).remove("nvidia.com/gpu");
            }
            // The same draws as BenchCluster's, so that both clusters have the same GPUs and the same ones free.
            int type = random.nextInt(BenchCluster.TYPES.size() + 1);
            if (type < BenchCluster.TYPES.size()) {
                var topology = BenchCluster.TYPES.get(type).apply(name);
                var free = IntStream.range(0, topology.size()).filter(p -> random.nextInt(3) > 0).boxed().toList();
                var devices = topology.devices().stream().map(BenchDraCluster::nvidiaGpu).toList();
                slices.add(TestDra.slice(name, TestDra.NVIDIA, 1, 1, devices));
                var taken = IntStream.range(0, topology.size()).filter(p -> !free.contains(p)).mapToObj(p -> "gpu-" + p).toArray(String[]::new);
                if (taken.length > 0) {
                    var held = TestDra.claim(NAMESPACE, name + "-job-gpus", TestDra.exactly("gpus", TestDra.NVIDIA, taken.length));
                    claims.add(TestDra.allocated(held, name, TestDra.NVIDIA, "pod-on-" + name, taken));
                }
            }
            names.add(name);
            nodeJson.add(node.toString());
            var labelMap = new HashMap<String, String>();
            labels.fields().forEachRemaining(entry -> labelMap.put(entry.getKey(), entry.getValue().asText()));
            facts.put(name, new NodeFacts(name, metadata.get("resourceVersion").asText(), labelMap, null, null));
        }
        dra = new ListedDra(slices, claims, List.of(TestDra.nvidiaClass()), CardCatalog.defaults());
    }

    /**
     * What an informer-backed extender holds once synced in a cluster of both: {@code plugin}'s nodes, and these with the
     * GPUs their slices publish and the holdings of the claims allocated on them, read as {@code InformerClusterView} reads
     * them from its DRA informers.
     */
    ClusterView view(BenchCluster plugin) {
        var facts = new ArrayList<NodeFacts>();
        plugin.names.forEach(name -> facts.add(plugin.facts.get(name)));
        var holdings = new HashMap<String, List<BoundPod>>();
        for (var name : names) {
            facts.add(this.facts.get(name).withSlices(dra.slicesOf(name)));
            // The claims' pods are not in the view: their GPUs are held as no eviction frees them.
            holdings.put(name, dra.claimHoldings(name, uid -> null));
        }
        var snapshot = NodeSnapshot.of(facts, holdings);
        return new SnapshotClusterView(() -> snapshot);
    }

    /** A GPU as NVIDIA's kubelet plugin publishes it ({@code gpu-<minor>}, its memory in bytes). */
    private static io.fabric8.kubernetes.api.model.resource.v1.Device nvidiaGpu(GpuDevice gpu) {
        var architecture = gpu.family().name().charAt(0) + gpu.family().name().substring(1).toLowerCase(Locale.ROOT);
        return TestDra.nvidiaGpu("gpu-" + gpu.index(), gpu.product(), architecture, gpu.computeCapability().major() + "."
                + gpu.computeCapability().minor() + ".0", Long.toString(gpu.memoryMiB() << 20));
    }

    /**
     * The device-plugin pod the DRA pod is compared with: the training pod, asking no NVLink (NVIDIA's driver publishes
     * no NVLink set, so the DRA pod cannot ask it and still be placed).
     */
    static String pluginPod(String training) {
        return edited(training, pod -> ((ObjectNode) pod.get("metadata").get("annotations")).remove("hetgpu.io/interconnect"));
    }

    /**
     * The same pod as kube-scheduler sends it in a DRA cluster: no {@code nvidia.com/gpu} and no card models asked in
     * annotations, its GPUs in the claim its template made ({@code spec.resourceClaims} naming the template,
     * {@code status.resourceClaimStatuses} the claim).
     */
    static String draPod(String training) {
        return edited(pluginPod(training), pod -> {
            ((ObjectNode) pod.get("metadata").get("annotations")).remove("hetgpu.io/gpu-models");
            for (var container : pod.get("spec").get("containers")) {
                for (var field : List.of("limits", "requests")) {
                    ((ObjectNode) container.get("resources").get(field)).remove("nvidia.com/gpu");
                }
                ((ObjectNode) container.get("resources")).putArray("claims").addObject().put("name", "gpus");
            }
            ((ObjectNode) pod.get("spec")).putArray("resourceClaims").addObject().put("name", "gpus")
                    .put("resourceClaimTemplateName", "training-gpus");
            ((ObjectNode) pod.get("status")).putArray("resourceClaimStatuses").addObject().put("name", "gpus")
                    .put("resourceClaimName", CLAIM);
        });
    }

    private static String edited(String pod, java.util.function.Consumer<ObjectNode> edit) {
        try {
            var tree = (ObjectNode) KubeJson.MAPPER.readTree(pod);
            edit.accept(tree);
            return KubeJson.MAPPER.writeValueAsString(tree);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
