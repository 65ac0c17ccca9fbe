package io.hetgpu.testcluster.demo;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.extender.job.JobMembership;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.gpu.PairLinks;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.allocation.DeviceMask;
import io.hetgpu.gpu.allocation.NvlinkIsland;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.kubelet.SimulatedKubelet;
import io.hetgpu.testcluster.report.DataDistance;
import io.hetgpu.testcluster.report.NodeView;
import io.hetgpu.testcluster.report.Placement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** Reads where the demo's pods went, and what the nodes' GPUs are, from the API server. */
final class PlacementReader {

    private final KubernetesClient client;
    private final Map<String, NodeSpec> specs = new HashMap<>();
    private final Map<String, NodeTopology> topologies = new HashMap<>();

    PlacementReader(KubernetesClient client, List<NodeSpec> nodes) throws InventoryFormatException {
        this.client = client;
        var codec = new InventoryCodec();
        for (var spec : nodes) {
            specs.put(spec.name(), spec);
            var annotations = client.nodes().withName(spec.name()).get().getMetadata().getAnnotations();
            if (annotations != null && annotations.containsKey(HetgpuKeys.ANNOTATION_INVENTORY)) {
                topologies.put(spec.name(), codec.decode(annotations.get(HetgpuKeys.ANNOTATION_INVENTORY)));
            }
        }
    }

    List<NodeView> nodes() {
        return specs.values().stream().sorted(Comparator.comparing(NodeSpec::name)).map(spec -> {
            var topology = topologies.get(spec.name());
            if (topology == null) {
                return NodeView.cpu(spec.name(), spec.rack(), spec.zone());
            }
            var islands = NvlinkIsland.among(topology.links(), DeviceMask.all(topology.size())).stream()
                    .filter(island -> island.size() > 1).map(NvlinkIsland::positions).toList();
            return new NodeView(spec.name(), spec.rack(), spec.zone(), spec.profile().orElse("cpu"), topology.device(0).model(),
                    topology.size(), Math.round(topology.device(0).memoryMiB() / 1024.0), islands, interconnect(topology));
        }).toList();
    }

    /** How a node's GPUs are joined, in links: what NVLink islands alone do not show. */
    static String interconnect(NodeTopology topology) {
        var links = PairLinks.among(topology);
        if (links.nvlinkPairs() == 0) {
            return "PCIe only";
        }
        if (links.viaNvswitch()) {
            return "NVSwitch, " + links.linkCount() + " NVLinks per GPU";
        }
        return links.nvlinkPairs() == links.pairs() ? links.linkCount() + " NVLinks per GPU pair"
                : "NVLink on " + links.nvlinkPairs() + " of " + links.pairs() + " GPU pairs (" + links.linkCount() + " links)";
    }

    /** @param reasons the extender's explanation per pod name (empty without an extender) */
    List<Placement> placements(Map<String, String> reasons) {
        return client.pods().inNamespace(DemoWorkload.NAMESPACE).list().getItems().stream()
                .sorted(Comparator.comparing((Pod p) -> -Objects.requireNonNullElse(p.getSpec().getPriority(), 0))
                        .thenComparing(p -> p.getMetadata().getName()))
                .map(pod -> placement(pod, reasons.getOrDefault(pod.getMetadata().getName(), ""))).toList();
    }

    private Placement placement(Pod pod, String reason) {
        // The job as the extender reads it, whichever convention names it (hetgpu.io/job, a training job, a JobSet...);
        // a pod of no job by the application it belongs to.
        var labels = Objects.requireNonNullElse(pod.getMetadata().getLabels(), Map.<String, String>of());
        var membership = JobMembershipReader.read(pod, new ArrayList<>());
        var job = membership.map(JobMembership::name).orElse(labels.getOrDefault(DemoWorkload.APP, "-"));
        var role = membership.map(JobMembership::role).filter(text -> !text.isEmpty()).orElse(labels.getOrDefault(DemoWorkload.COMPONENT, "-"));
        var priority = Objects.requireNonNullElse(pod.getSpec().getPriority(), 0);
        var priorityText = priority >= DemoWorkload.HIGH ? "high" : priority <= DemoWorkload.LOW ? "low" : "normal";
        var name = pod.getMetadata().getName();
        var nodeName = pod.getSpec().getNodeName();
        var usesData = pod.getSpec().getVolumes() != null && pod.getSpec().getVolumes().stream()
                .anyMatch(v -> v.getPersistentVolumeClaim() != null && DemoWorkload.DATA_CLAIM.equals(v.getPersistentVolumeClaim().getClaimName()));
        if (nodeName == null || nodeName.isEmpty()) {
            return new Placement(name, job, role, priorityText, "", "", "", List.of(), false, DataDistance.NO_DATA, request(pod, priorityText), reason);
        }
        var spec = specs.get(nodeName);
        var topology = topologies.get(nodeName);
        var positions = new ArrayList<Integer>();
        var devices = pod.getMetadata().getAnnotations() == null ? null : pod.getMetadata().getAnnotations().get(SimulatedKubelet.DEVICES_ANNOTATION);
        if (topology != null && devices != null && !devices.isEmpty()) {
            for (var uuid : devices.split(",")) {
                topology.positionOf(uuid).ifPresent(positions::add);
            }
        }
        positions.sort(Integer::compare);
        boolean nvlink = topology != null && NvlinkIsland.among(topology.links(), DeviceMask.of(positions)).size() <= 1;
        var card = topology == null ? "cpu" : topology.device(positions.isEmpty() ? 0 : positions.get(0)).model();
        return new Placement(name, job, role, priorityText, nodeName, spec.rack(), card, positions, nvlink, usesData ? distanceToData(spec) : DataDistance.NO_DATA,
                request(pod, priorityText), reason);
    }

    /**
     * What the pod asks of its GPUs, in words: count, interconnect, memory, card models, and the card
     * class its priority (or {@code hetgpu.io/gpu-preference}) makes hetgpu prefer.
     */
    static String request(Pod pod, String priority) {
        var annotations = Objects.requireNonNullElse(pod.getMetadata().getAnnotations(), Map.<String, String>of());
        int gpus = pod.getSpec().getContainers().stream()
                .map(c -> c.getResources() == null || c.getResources().getLimits() == null ? null
                        : c.getResources().getLimits().get(HetgpuKeys.DEFAULT_RESOURCE_NAME))
                .filter(Objects::nonNull).mapToInt(q -> q.getNumericalAmount().intValue()).sum();
        if (gpus == 0) {
            return "no GPU (a CPU node first)";
        }
        var parts = new ArrayList<String>();
        parts.add(gpus == 1 ? "1 GPU" : gpus + " GPUs");
        if (annotations.containsKey(HetgpuKeys.POD_INTERCONNECT)) {
            parts.add(annotations.get(HetgpuKeys.POD_INTERCONNECT).equals("nvlink") ? "NVLink" : annotations.get(HetgpuKeys.POD_INTERCONNECT));
        }
        if (annotations.containsKey(HetgpuKeys.POD_MIN_GPU_MEMORY)) {
            parts.add(">= " + annotations.get(HetgpuKeys.POD_MIN_GPU_MEMORY) + " per GPU");
        }
        if (annotations.containsKey(HetgpuKeys.POD_GPU_MODELS)) {
            parts.add("only " + annotations.get(HetgpuKeys.POD_GPU_MODELS));
        }
        var preference = annotations.getOrDefault(HetgpuKeys.POD_GPU_PREFERENCE,
                priority.equals("high") ? "newest" : priority.equals("low") ? "oldest" : "any");
        parts.add(switch (preference) {
            case "newest" -> "newest card first";
            case "oldest" -> "oldest card that fits";
            default -> "any card";
        });
        return String.join(", ", parts);
    }

    private static DataDistance distanceToData(NodeSpec node) {
        if (node.rack().equals(DemoCluster.DATA_RACK)) {
            return DataDistance.SAME_RACK;
        }
        var dataZone = DemoCluster.nodes().stream().filter(n -> n.rack().equals(DemoCluster.DATA_RACK)).findFirst().orElseThrow().zone();
        return node.zone().equals(dataZone) ? DataDistance.SAME_ZONE : DataDistance.OTHER_ZONE;
    }
}
