package io.hetgpu.extender.service;

import static io.hetgpu.extender.TestDra.HETGPU;
import static io.hetgpu.extender.TestDra.allocated;
import static io.hetgpu.extender.TestDra.hetgpuClaim;
import static io.hetgpu.extender.TestDra.hetgpuGpus;
import static io.hetgpu.extender.TestDra.slice;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.hetgpu.extender.TestDra;
import io.hetgpu.extender.TestTopologies;
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
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.allocation.NvlinkSets;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A node of hetgpu's DRA driver is judged as the same machine served by hetgpu's device plugin: the same pod, asking
 * GPUs (on NVLink) by hetgpu's claim there and by {@code nvidia.com/gpu} with {@code hetgpu.io/interconnect: nvlink}
 * here, gets the same filter and prioritize answers, on DGX-1s empty and holding whole NVLink sets (what hetgpu's claims
 * take), beside a PCIe box and a CPU node.
 */
class HetgpuDraEquivalenceTest {

    private static final Instant BOUND = Instant.parse("2026-01-01T00:00:00Z");
    private final CardCatalog catalog = CardCatalog.defaults();
    private final PlacementPolicy policy = new PlacementPolicy(PolicySettings.DEFAULTS);

    /** Each GPU node, with the positions its running pod holds: none, a published quad, a published pair. */
    private final Map<String, NodeTopology> machines = new LinkedHashMap<>();
    private final Map<String, List<Integer>> held = new LinkedHashMap<>();
    private static final List<String> NODES = List.of("dgx1-a", "dgx1-b", "dgx1-c", "t4", "cpu");

    HetgpuDraEquivalenceTest() {
        for (var name : List.of("dgx1-a", "dgx1-b", "dgx1-c")) {
            machines.put(name, TestTopologies.dgx1V100(name));
        }
        machines.put("t4", TestTopologies.t4x4("t4"));
        var dgx1 = machines.get("dgx1-b").links();
        held.put("dgx1-a", List.of());
        held.put("dgx1-b", NvlinkSets.of(dgx1, 4).sets().getFirst().positions());
        held.put("dgx1-c", NvlinkSets.of(dgx1, 2).sets().getFirst().positions());
        held.put("t4", List.of(0));
    }

    @Test
    void aDgx1OfHetgpusDriverAnswersAsTheSameDgx1OfItsDevicePlugin() {
        var claims = new ArrayList<ResourceClaim>();
        var tiers = List.of(catalog.tierOf("V100", io.hetgpu.gpu.ComputeCapability.parse("7.0"), 16160).rank(),
                catalog.tierOf("T4", io.hetgpu.gpu.ComputeCapability.parse("7.5"), 15360).rank());
        var devicePlugin = devicePluginService();
        var dra = draService(claims);
        int asked = 0;
        for (int gpus : List.of(1, 2, 4, 8)) {
            for (int priority : List.of(1_000_000, 0, -10)) {
                var viaPlugin = pod("p" + gpus + "x" + priority, gpus, priority, gpus > 1).build();
                var claimName = "c" + gpus + "x" + priority;
                claims.add(hetgpuClaim("ml", claimName, gpus, tiers));
                var viaClaim = pod("p" + gpus + "x" + priority, 0, priority, false).editSpec().withResourceClaims(
                        new PodResourceClaimBuilder().withName("gpus").withResourceClaimName(claimName).build()).endSpec().build();

                var pluginFilter = devicePlugin.filter(new ExtenderArgs(viaPlugin, null, NODES));
                var claimFilter = dra.filter(new ExtenderArgs(viaClaim, null, NODES));
                var what = gpus + " GPUs at priority " + priority;
                assertThat(sameWords(claimFilter)).as(what + ": filter").isEqualTo(pluginFilter);
                assertThat(dra.prioritize(new ExtenderArgs(viaClaim, null, NODES))).as(what + ": prioritize")
                        .isEqualTo(devicePlugin.prioritize(new ExtenderArgs(viaPlugin, null, NODES)));
                asked++;
            }
        }
        assertThat(asked).isEqualTo(12);
        // Not an equality of empty answers: NVLink sets were judged, whole machines refused for what they lack.
        var eight = dra.filter(new ExtenderArgs(pod("p8x0", 0, 0, false).editSpec().withResourceClaims(
                new PodResourceClaimBuilder().withName("gpus").withResourceClaimName("c8x0").build()).endSpec().build(), null, NODES));
        assertThat(eight.nodeNames()).containsExactly("dgx1-a");
        var pair = dra.filter(new ExtenderArgs(pod("p2x0", 0, 0, false).editSpec().withResourceClaims(
                new PodResourceClaimBuilder().withName("gpus").withResourceClaimName("c2x0").build()).endSpec().build(), null, NODES));
        assertThat(pair.nodeNames()).containsExactly("dgx1-a", "dgx1-b", "dgx1-c");
        assertThat(pair.failedAndUnresolvableNodes().get("t4")).contains("no NVLink-connected set of 2");
    }

    /**
     * The reasons with the words naming where the GPUs were read put as the device plugin's node says them, and without
     * the note on how the claim was read.
     */
    private static FilterResult sameWords(FilterResult answer) {
        java.util.function.UnaryOperator<Map<String, String>> reworded = reasons -> {
            var same = new LinkedHashMap<String, String>();
            // The claim's reading is said after a reason; the annotations' pod has no claim to read.
            reasons.forEach((node, reason) -> same.put(node, reason.replace(" from ResourceSlices (gpu.hetgpu.io)", "")
                    .replaceFirst(" \\(claims: resourceClaims.*\\)$", "")));
            return same;
        };
        return new FilterResult(answer.nodes(), answer.nodeNames(), reworded.apply(answer.failedNodes()),
                reworded.apply(answer.failedAndUnresolvableNodes()), answer.error());
    }

    private ExtenderService devicePluginService() {
        var facts = new ArrayList<NodeFacts>();
        machines.forEach((name, topology) -> {
            var free = IntStream.range(0, topology.size()).filter(i -> !held.get(name).contains(i)).toArray();
            facts.add(new NodeFacts(name, "1", Map.of(), TestTopologies.inventory(topology), TestTopologies.free(topology, free)));
        });
        facts.add(new NodeFacts("cpu", "1", Map.of(), null, null));
        var bound = new HashMap<String, List<BoundPod>>();
        machines.forEach((name, topology) -> {
            if (!held.get(name).isEmpty()) {
                bound.put(name, List.of(new BoundPod("uid-running-" + name, held.get(name).size(), false, BOUND,
                        held.get(name).stream().map(i -> topology.device(i).uuid()).toList())));
            }
        });
        var snapshot = NodeSnapshot.of(facts, bound);
        return new ExtenderService(new SnapshotClusterView(() -> snapshot), new PodRequestParser("nvidia.com/gpu", catalog),
                new NodeStateFactory(catalog, "topology.hetgpu.io/rack"), policy, (pod, table) -> { });
    }

    private ExtenderService draService(List<ResourceClaim> claims) {
        var facts = new ArrayList<NodeFacts>();
        var holdings = new HashMap<String, List<BoundPod>>();
        machines.forEach((name, topology) -> {
            var slices = SliceReader.read(name, List.of(slice("s-" + name, name, HETGPU, HetgpuDra.pool(name), 1, 1,
                    hetgpuGpus(topology, catalog))), catalog);
            facts.add(new NodeFacts(name, "1", Map.of(), null, null, null, true, slices));
            if (!held.get(name).isEmpty()) {
                var uid = "uid-running-" + name;
                var running = allocated(TestDra.claim("ml", "running-" + name, TestDra.exactly("gpus", HETGPU, held.get(name).size())),
                        name, HETGPU, uid, held.get(name).stream().map(HetgpuDra::deviceName).toArray(String[]::new));
                var pod = new PodBuilder().withNewMetadata().withNamespace("ml").withName("running-" + name).withUid(uid)
                        .withCreationTimestamp(BOUND.toString()).endMetadata().withNewSpec().withNodeName(name).endSpec().build();
                holdings.put(name, ClaimHoldings.of(List.of(running), one -> one.equals(uid) ? pod : null));
            }
        });
        facts.add(new NodeFacts("cpu", "1", Map.of(), null, null));
        var snapshot = NodeSnapshot.of(facts, holdings);
        var parser = new PodRequestParser("nvidia.com/gpu", catalog, Set.of()).withDra(new LiveLookup(claims));
        return new ExtenderService(new SnapshotClusterView(() -> snapshot), parser, new NodeStateFactory(catalog, "topology.hetgpu.io/rack"),
                policy, (pod, table) -> { });
    }

    /** The claims as the list holds them when asked: each pod's claim is added before its pod is judged. */
    private record LiveLookup(List<ResourceClaim> claims) implements io.hetgpu.extender.model.DraLookup {
        @Override
        public ResourceClaim claim(String namespace, String name) {
            return TestDra.Lookup.of(claims, List.of()).claim(namespace, name);
        }

        @Override
        public io.fabric8.kubernetes.api.model.resource.v1.DeviceClass deviceClass(String name) {
            return HETGPU.equals(name) ? TestDra.hetgpuClass() : null;
        }

        @Override
        public io.fabric8.kubernetes.api.model.resource.v1.DeviceClass extendedResourceClass(String resourceName) {
            return null;
        }
    }

    private static PodBuilder pod(String name, int gpus, int priority, boolean nvlink) {
        var annotations = nvlink ? Map.of("hetgpu.io/interconnect", "nvlink") : Map.<String, String>of();
        var builder = new PodBuilder().withNewMetadata().withNamespace("ml").withName(name).withUid("uid-" + name).withAnnotations(annotations)
                .endMetadata().withNewSpec().withPriority(priority).addNewContainer().withName("main").withImage("trainer").endContainer().endSpec();
        if (gpus > 0) {
            builder.editSpec().editFirstContainer().editOrNewResources().addToLimits("nvidia.com/gpu", new Quantity(Integer.toString(gpus)))
                    .endResources().endContainer().endSpec();
        }
        return builder;
    }
}
