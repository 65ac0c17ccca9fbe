package io.hetgpu.extender.service;

import static io.hetgpu.extender.TestDra.HETGPU;
import static io.hetgpu.extender.TestDra.hetgpuClaim;
import static io.hetgpu.extender.TestDra.hetgpuGpus;
import static io.hetgpu.extender.TestDra.slice;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.hetgpu.extender.TestDra;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.SnapshotClusterView;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeSlices;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.model.SliceReader;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.HostPriority;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * kube-scheduler and the extender order nodes alike for hetgpu's claims. kube-scheduler's DynamicResources plugin (1.35
 * and later, with DRAPrioritizedList) scores a node by the prioritized-list alternatives its allocation takes there, the
 * earlier the better ({@code FirstAvailableDeviceRequestMaxSize - index} per allocated subrequest,
 * pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go, computeScore); its allocator takes on each node
 * the first alternative the node can serve. So on a cluster of one card per node, kube-scheduler's order is the claim's
 * order of tiers. The extender's prioritize, which reads the pod's priority from {@code spec.priority}, must order the
 * nodes the same way for the claim hetgpu's admission gives that priority: newest first for a high-priority pod, oldest
 * first for a low-priority one. The expected order is derived here from the claim itself, so a change on either side
 * (the claims' order, or the extender's tier scoring) fails this test.
 */
class PrioritizedListAgreementTest {

    private static final int HIGH = 1_000_000;
    private static final int LOW = -10;
    private final CardCatalog catalog = CardCatalog.defaults();
    private final Map<String, NodeTopology> machines = new LinkedHashMap<>();
    private final Map<String, NodeSlices> slices = new LinkedHashMap<>();
    private final List<ResourceClaim> claims = new ArrayList<>();
    private final ExtenderService extender;

    PrioritizedListAgreementTest() {
        // Listed neither newest nor oldest first, so that no order follows from the listing.
        machines.put("v100", TestTopologies.dgx1V100("v100"));
        machines.put("h100", TestTopologies.dgxH100("h100"));
        machines.put("k80", TestTopologies.k80x4("k80"));
        machines.put("a100", TestTopologies.dgxA100("a100"));
        machines.put("t4", TestTopologies.t4x4("t4"));
        var facts = new ArrayList<NodeFacts>();
        machines.forEach((name, topology) -> {
            var read = SliceReader.read(name, List.of(slice("s-" + name, name, HETGPU, HetgpuDra.pool(name), 1, 1, hetgpuGpus(topology, catalog))),
                    catalog);
            slices.put(name, read);
            facts.add(new NodeFacts(name, "1", Map.of(), null, null, null, true, read));
        });
        var snapshot = NodeSnapshot.of(facts, Map.of());
        var parser = new PodRequestParser("nvidia.com/gpu", catalog, Set.of()).withDra(new io.hetgpu.extender.model.DraLookup() {
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
        });
        extender = new ExtenderService(new SnapshotClusterView(() -> snapshot), parser, new NodeStateFactory(catalog, "topology.hetgpu.io/rack"),
                new PlacementPolicy(PolicySettings.DEFAULTS), (pod, table) -> { });
    }

    /** The tiers the cluster's cards publish, newest first: what hetgpu's claim lists for a high-priority pod. */
    private List<Integer> tiersNewestFirst() {
        return slices.values().stream().map(read -> read.gpus().getFirst().tier()).distinct().sorted(Comparator.reverseOrder()).toList();
    }

    @Test
    void aHighPriorityPodsNodesAreOrderedAsItsClaimListsTheirTiers() {
        for (int gpus : List.of(1, 2, 4)) {
            var tiers = tiersNewestFirst();
            assertAgreement(pod("urgent-" + gpus, gpus, HIGH, tiers), gpus, tiers);
        }
    }

    @Test
    void aLowPriorityPodsNodesAreOrderedAsItsClaimListsTheirTiers() {
        for (int gpus : List.of(1, 2)) {
            var tiers = tiersNewestFirst().reversed();
            assertAgreement(pod("sweep-" + gpus, gpus, LOW, tiers), gpus, tiers);
        }
    }

    @Test
    void aLowPriorityPodWhoseClaimListsTheNewestFirstIsStillScoredAsLowPriority() {
        var newestFirst = tiersNewestFirst();
        var claimsNewest = extender.prioritize(new ExtenderArgs(pod("sly", 1, LOW, newestFirst), null, List.copyOf(machines.keySet())));
        var claimsOldest = extender.prioritize(new ExtenderArgs(pod("sly", 1, LOW, newestFirst.reversed()), null, List.copyOf(machines.keySet())));
        var urgent = extender.prioritize(new ExtenderArgs(pod("sly", 1, HIGH, newestFirst), null, List.copyOf(machines.keySet())));

        assertThat(claimsNewest).as("the claim's order is a preference, not a priority").isEqualTo(claimsOldest);
        assertThat(claimsNewest).isNotEqualTo(urgent);
        assertThat(best(claimsNewest)).isEqualTo("k80");
        assertThat(best(urgent)).isEqualTo("h100");
    }

    /**
     * The nodes kube-scheduler can allocate the claim on are those the extender's filter passes, and the extender's scores
     * fall strictly with the index of the first alternative each node serves.
     */
    private void assertAgreement(Pod pod, int gpus, List<Integer> listed) {
        var nodes = List.copyOf(machines.keySet());
        var firstServed = new LinkedHashMap<String, Integer>();
        slices.forEach((name, read) -> {
            int index = listed.indexOf(read.gpus().getFirst().tier());
            boolean enough = read.gpus().size() >= gpus;
            boolean onOneSet = gpus == 1 || read.gpus().stream().allMatch(gpu -> gpu.nvlinkSets().containsKey(setSize(gpus)));
            if (index >= 0 && enough && onOneSet) {
                firstServed.put(name, index);
            }
        });
        var what = pod.getMetadata().getName() + " listing tiers " + listed;
        assertThat(firstServed).as(what + ": nodes kube-scheduler can allocate on").hasSizeGreaterThan(1);

        var filter = extender.filter(new ExtenderArgs(pod, null, nodes));
        assertThat(filter.nodeNames()).as(what + ": filter").containsExactlyInAnyOrderElementsOf(firstServed.keySet());

        var scores = new LinkedHashMap<String, Integer>();
        for (HostPriority priority : extender.prioritize(new ExtenderArgs(pod, null, List.copyOf(firstServed.keySet()))).priorities()) {
            scores.put(priority.host(), priority.score());
        }
        var byClaim = firstServed.keySet().stream().sorted(Comparator.comparing(firstServed::get)).toList();
        for (int i = 1; i < byClaim.size(); i++) {
            var earlier = byClaim.get(i - 1);
            var later = byClaim.get(i);
            assertThat(scores.get(earlier)).as(what + ": " + earlier + " (alternative " + firstServed.get(earlier) + ") above " + later
                    + " (alternative " + firstServed.get(later) + "), scores " + scores).isGreaterThan(scores.get(later));
        }
    }

    private static int setSize(int gpus) {
        return gpus <= 2 ? 2 : gpus <= 4 ? 4 : 8;
    }

    private Pod pod(String name, int gpus, int priority, List<Integer> tiers) {
        var claimName = name + "-" + priority + "-" + tiers.getFirst();
        claims.add(hetgpuClaim("ml", claimName, gpus, tiers));
        return new PodBuilder().withNewMetadata().withNamespace("ml").withName(name).withUid("uid-" + name).endMetadata()
                .withNewSpec().withPriority(priority).addNewContainer().withName("main").withImage("trainer").endContainer()
                .withResourceClaims(new PodResourceClaimBuilder().withName("gpus").withResourceClaimName(claimName).build()).endSpec().build();
    }

    private static String best(ExtenderService.Priorities answer) {
        return answer.priorities().stream().max(Comparator.comparingInt(HostPriority::score)).orElseThrow().host();
    }
}
