package io.hetgpu.extender.service;

import static io.hetgpu.extender.TestDra.NVIDIA;
import static io.hetgpu.extender.TestDra.allocated;
import static io.hetgpu.extender.TestDra.claim;
import static io.hetgpu.extender.TestDra.exactly;
import static io.hetgpu.extender.TestDra.nvidiaClass;
import static io.hetgpu.extender.TestDra.nvidiaGpus;
import static io.hetgpu.extender.TestDra.slice;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.hetgpu.extender.TestDra;
import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.cluster.ClaimHoldings;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.SnapshotClusterView;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.model.SliceReader;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.FilterResult;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The one policy path for both: a pod asking GPUs through ResourceClaims on nodes a DRA driver publishes gets the very
 * answers, filter and prioritize, that the same pod asking {@code nvidia.com/gpu} gets on the same GPUs served by NVIDIA's
 * device plugin and labelled by GPU Feature Discovery (the two sources know the same: the cards, not their links).
 */
class DraEquivalenceTest {

    private static final Instant BOUND = Instant.parse("2026-01-01T00:00:00Z");
    private final CardCatalog catalog = CardCatalog.defaults();
    private final PlacementPolicy policy = new PlacementPolicy(PolicySettings.DEFAULTS);

    /** name, GFD product, product as NVML reports it, architecture, compute capability, memory MiB, count. */
    private record Machine(String name, String gfdProduct, String product, String architecture, int major, int minor, long memoryMiB, int count) {
    }

    private static final List<Machine> MACHINES = List.of(
            new Machine("dgx1", "Tesla-V100-SXM2-16GB", "Tesla V100-SXM2-16GB", "Volta", 7, 0, 16160, 8),
            new Machine("k80", "Tesla-K80", "Tesla K80", "Kepler", 3, 7, 11441, 4),
            new Machine("a100", "NVIDIA-A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB", "Ampere", 8, 0, 40960, 8));
    private static final List<String> NODES = List.of("dgx1", "k80", "a100", "cpu");

    @Test
    void draPodsGetTheDevicePluginPodsAnswersOnTheSameGpus() {
        // Four A100s of node a100 held by a running pod: a prediction there, its claim's devices here.
        var runningClaim = allocated(claim("ml", "running-gpus", exactly("gpus", NVIDIA, 4)), "a100", NVIDIA, "uid-running",
                "gpu-0", "gpu-1", "gpu-2", "gpu-3");
        var devicePlugin = devicePluginService(Map.of("a100", List.of(new BoundPod("uid-running", 4, false, BOUND))));
        var claims = new ArrayList<ResourceClaim>(List.of(runningClaim));
        var asked = new LinkedHashMap<String, Pod[]>();
        asked.put("urgent pod, 2 GPUs", pair("urgent", 2, 1_000_000, Map.of(), List.of(), claims));
        asked.put("sweep pod, 1 GPU", pair("sweep", 1, 0, Map.of("hetgpu.io/priority", "low"), List.of(), claims));
        asked.put("4-GPU pod beside the claim that holds 4", pair("four", 4, 0, Map.of(), List.of(), claims));
        asked.put("8-GPU pod", pair("eight", 8, 0, Map.of(), List.of(), claims));
        asked.put("A100 with 40 GiB", pair("a100-only", 2, 0, Map.of("hetgpu.io/gpu-models", "A100", "hetgpu.io/min-gpu-memory", "40Gi"),
                List.of("device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-40GB'",
                        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"), claims));
        asked.put("Volta or newer by compute capability", pair("cc", 1, 0, Map.of("hetgpu.io/min-compute-capability", "7.0"),
                List.of("device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('7.0.0')) >= 0"), claims));
        asked.put("CPU pod", new Pod[] {cpuPod("cpu-a"), cpuPod("cpu-b")});
        var dra = draService(claims, runningClaim);

        for (var entry : asked.entrySet()) {
            var pods = entry.getValue();
            var viaPlugin = new ExtenderArgs(pods[0], null, NODES);
            var viaClaims = new ExtenderArgs(pods[1], null, NODES);
            var pluginFilter = devicePlugin.filter(viaPlugin);
            var claimFilter = dra.filter(viaClaims);
            assertThat(sameWords(claimFilter)).as(entry.getKey() + ": filter").isEqualTo(pluginFilter);
            assertThat(dra.prioritize(viaClaims)).as(entry.getKey() + ": prioritize").isEqualTo(devicePlugin.prioritize(viaPlugin));
        }
        // Not an equality of two empty answers: the pods were placed, and refused, as the policy places and refuses.
        var eight = devicePlugin.filter(new ExtenderArgs(asked.get("8-GPU pod")[0], null, NODES));
        assertThat(eight.nodeNames()).containsExactly("dgx1");
        assertThat(eight.failedNodes()).containsKey("a100");
        var cpu = devicePlugin.prioritize(new ExtenderArgs(asked.get("CPU pod")[0], null, NODES));
        assertThat(cpu.priorities()).isNotEmpty();
    }

    @Test
    void wholeNodesInTheRequestCarryTheGpusTheirSlicesPublish() {
        // kube-scheduler without nodeCacheCapable sends whole Nodes: their objects say nothing of ResourceSlices.
        var claims = new ArrayList<ResourceClaim>();
        var pods = pair("two", 2, 0, Map.of(), List.of(), claims);
        var dra = draService(claims, allocated(claim("ml", "none", exactly("gpus", NVIDIA, 1)), "a100", NVIDIA, "uid-x", "gpu-7"));
        var wholeNodes = NODES.stream().map(name -> new io.hetgpu.extender.wire.WireNode(new NodeFacts(name, "1", Map.of(), null, null),
                new byte[] {'{', '}'}, 0, 2)).toList();

        var byNodes = dra.filter(new ExtenderArgs(pods[1], wholeNodes, null));
        var byNames = dra.filter(new ExtenderArgs(pods[1], null, NODES));

        assertThat(byNodes.nodes()).extracting(node -> node.facts().name()).containsExactly("dgx1", "k80", "a100");
        assertThat(byNodes.failedAndUnresolvableNodes()).isEqualTo(byNames.failedAndUnresolvableNodes());
    }

    @Test
    void whatTheExtenderDidNotReadOfAClaimIsSaidInItsRefusalsAndRefusesNothing() {
        var claims = new ArrayList<ResourceClaim>();
        var pods = pair("odd", 8, 0, Map.of(), List.of("device.attributes['gpu.nvidia.com'].productName.matches('^NVIDIA A')"), claims);
        var dra = draService(claims, allocated(claim("ml", "none", exactly("gpus", NVIDIA, 1)), "a100", NVIDIA, "uid-x", "gpu-7"));

        var answer = dra.filter(new ExtenderArgs(pods[1], null, NODES));

        assertThat(answer.nodeNames()).as("8 GPUs of any model: the selector left to kube-scheduler").containsExactly("dgx1");
        assertThat(answer.failedAndUnresolvableNodes().get("k80")).startsWith("node has 4 GPUs in total, pod needs 8 (claims: ")
                .contains("not read, left to kube-scheduler");
    }

    /**
     * The answer with the words that name where a node's GPUs were read from put as the device plugin's node says them:
     * a reason names its source, and that is the one difference there is.
     */
    private static FilterResult sameWords(FilterResult answer) {
        java.util.function.UnaryOperator<Map<String, String>> reworded = reasons -> {
            var same = new LinkedHashMap<String, String>();
            reasons.forEach((node, reason) -> same.put(node, reason.replace("from ResourceSlices (gpu.nvidia.com)", "from GPU Feature Discovery labels")));
            return same;
        };
        return new FilterResult(answer.nodes(), answer.nodeNames(), reworded.apply(answer.failedNodes()),
                reworded.apply(answer.failedAndUnresolvableNodes()), answer.error());
    }

    private ExtenderService devicePluginService(Map<String, List<BoundPod>> bound) {
        var facts = new ArrayList<NodeFacts>();
        for (var machine : MACHINES) {
            var labels = TestNodes.gfdLabels(machine.gfdProduct(), machine.memoryMiB(), machine.major(), machine.minor(), machine.count());
            facts.add(new NodeFacts(machine.name(), "1", labels, null, null, Integer.toString(machine.count())));
        }
        facts.add(new NodeFacts("cpu", "1", Map.of(), null, null));
        var snapshot = NodeSnapshot.of(facts, bound);
        return new ExtenderService(new SnapshotClusterView(() -> snapshot), new PodRequestParser("nvidia.com/gpu", catalog),
                new NodeStateFactory(catalog, "topology.hetgpu.io/rack"), policy, (pod, table) -> { });
    }

    private ExtenderService draService(List<ResourceClaim> claims, ResourceClaim running) {
        var facts = new ArrayList<NodeFacts>();
        for (var machine : MACHINES) {
            var slices = SliceReader.read(machine.name(), List.of(slice(machine.name(), NVIDIA, 1, 1, nvidiaGpus(machine.count(), machine.product(),
                    machine.architecture(), machine.major() + "." + machine.minor() + ".0", machine.memoryMiB() + "Mi"))), catalog);
            facts.add(new NodeFacts(machine.name(), "1", Map.of(), null, null, null, true, slices));
        }
        facts.add(new NodeFacts("cpu", "1", Map.of(), null, null));
        var runningPod = new PodBuilder().withNewMetadata().withNamespace("ml").withName("running").withUid("uid-running")
                .withCreationTimestamp(BOUND.toString()).endMetadata().withNewSpec().withNodeName("a100").endSpec().build();
        var snapshot = NodeSnapshot.of(facts, Map.of("a100", ClaimHoldings.of(List.of(running), uid -> uid.equals("uid-running") ? runningPod : null)));
        var parser = new PodRequestParser("nvidia.com/gpu", catalog, Set.of()).withDra(TestDra.Lookup.of(claims, List.of(nvidiaClass())));
        return new ExtenderService(new SnapshotClusterView(() -> snapshot), parser, new NodeStateFactory(catalog, "topology.hetgpu.io/rack"),
                policy, (pod, table) -> { });
    }

    /** The same pod twice: asking {@code nvidia.com/gpu} with annotations, and asking a claim with the selectors that say the same. */
    private static Pod[] pair(String name, int gpus, int priority, Map<String, String> annotations, List<String> selectors,
                              List<ResourceClaim> claims) {
        var devicePluginAnnotations = new LinkedHashMap<>(annotations);
        var claimAnnotations = new LinkedHashMap<String, String>();
        annotations.forEach((key, value) -> {
            if (key.equals("hetgpu.io/priority")) {
                // Not a card requirement: both pods carry it.
                claimAnnotations.put(key, value);
            }
        });
        var viaPlugin = base(name, priority, devicePluginAnnotations).editSpec().editFirstContainer().editOrNewResources()
                .addToLimits("nvidia.com/gpu", new Quantity(Integer.toString(gpus))).endResources().endContainer().endSpec().build();
        var viaClaim = base(name, priority, claimAnnotations).editSpec().withResourceClaims(new PodResourceClaimBuilder().withName("gpus")
                .withResourceClaimName(name + "-gpus").build()).endSpec().build();
        claims.add(claim("ml", name + "-gpus", exactly("gpus", NVIDIA, gpus, selectors.toArray(String[]::new))));
        return new Pod[] {viaPlugin, viaClaim};
    }

    private static PodBuilder base(String name, int priority, Map<String, String> annotations) {
        return new PodBuilder().withNewMetadata().withNamespace("ml").withName(name).withUid("uid-" + name).withAnnotations(annotations)
                .endMetadata().withNewSpec().withPriority(priority).addNewContainer().withName("main").withImage("trainer").endContainer().endSpec();
    }

    private static Pod cpuPod(String uid) {
        return base("cpu", 0, Map.of()).editMetadata().withUid(uid).endMetadata().build();
    }
}
