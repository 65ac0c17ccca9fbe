package io.hetgpu.extender.service;

import static io.hetgpu.extender.TestDra.HETGPU;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.hetgpu.extender.TestDra;
import io.hetgpu.extender.TestNodes;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.SnapshotClusterView;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeSlices;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.HostPriority;
import io.hetgpu.gpu.NodeTopology;
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
 * first for a low-priority one. The claims are the shipped ones (manifests/components/dra-claim-templates: one
 * subrequest per band of tiers), and the expected order is derived here from each claim's own bands, so a change on
 * either side (the claims' order or bands, or the extender's tier scoring) fails this test.
 *
 * A claim of several GPUs lists each generation twice, first bound to one NVLink set, then alone: a node with no free
 * set (a PCIe-only K80, T4 or V100 node) is served by its generation's second alternative. The extender ranks such a
 * pod's nodes by generation, then set, then tier ({@code CardThenSet}), so every pair of nodes is compared: a DGX-1
 * P100's set before a K80 box for a low-priority pod (one generation, the set first), a K80 box before a V100 set (the
 * older generation first, whatever its links), a PCIe-only V100 node before an A100 set. The nodes are empty and hold
 * 4 or 8 GPUs: the extender's bin packing and job locality weigh on top of the card and the set, as kube-scheduler's
 * own plugins (NodeResourcesFit and the rest) weigh beside its DRA score, and are not what this test compares.
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
        machines.put("p100", TestTopologies.dgx1P100("p100"));
        machines.put("v100-pcie", TestTopologies.v100Pcie("v100-pcie", 8));
        var facts = new ArrayList<NodeFacts>();
        machines.forEach((name, topology) -> {
            var node = TestNodes.hetgpuDraFacts(name, topology);
            slices.put(name, node.slices());
            facts.add(node);
        });
        var snapshot = NodeSnapshot.of(facts, Map.of());
        var parser = new PodRequestParser("nvidia.com/gpu", catalog, Set.of()).withDra(lookup);
        extender = new ExtenderService(new SnapshotClusterView(() -> snapshot), parser, new NodeStateFactory(catalog, "topology.hetgpu.io/rack"),
                new PlacementPolicy(PolicySettings.DEFAULTS), (pod, table) -> { });
    }

    /** The claims as the list holds them when asked, and hetgpu's DeviceClass. */
    private final io.hetgpu.extender.model.DraLookup lookup = new io.hetgpu.extender.model.DraLookup() {
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
        };

    @Test
    void aHighPriorityPodsNodesAreOrderedAsItsClaimListsTheirTiers() throws Exception {
        for (int gpus : List.of(1, 2, 4)) {
            assertAgreement(pod("urgent-" + gpus, HIGH, shipped("hetgpu-gpus-" + gpus + "-high")), gpus);
        }
    }

    @Test
    void aLowPriorityPodsNodesAreOrderedAsItsClaimListsTheirTiers() throws Exception {
        for (int gpus : List.of(1, 2, 4)) {
            assertAgreement(pod("sweep-" + gpus, LOW, shipped("hetgpu-gpus-" + gpus + "-low")), gpus);
        }
    }

    @Test
    void aLowPriorityPodWhoseClaimListsTheNewestFirstIsStillScoredAsLowPriority() throws Exception {
        var nodes = List.copyOf(machines.keySet());
        var claimsNewest = extender.prioritize(new ExtenderArgs(pod("sly", LOW, shipped("hetgpu-gpus-1-high")), null, nodes));
        var claimsOldest = extender.prioritize(new ExtenderArgs(pod("sly", LOW, shipped("hetgpu-gpus-1-low")), null, nodes));
        var urgent = extender.prioritize(new ExtenderArgs(pod("sly", HIGH, shipped("hetgpu-gpus-1-high")), null, nodes));

        assertThat(claimsNewest).as("the claim's order is a preference, not a priority").isEqualTo(claimsOldest);
        assertThat(claimsNewest).isNotEqualTo(urgent);
        assertThat(best(claimsNewest)).isEqualTo("k80");
        assertThat(best(urgent)).isEqualTo("h100");
    }

    @Test
    void everyShippedClaimReadsAsItsCountWithNvlinkPreferredNotRequired() throws Exception {
        for (int gpus : List.of(1, 2, 4, 8)) {
            for (var level : List.of("high", "normal", "low")) {
                var pod = pod("p-" + gpus + "-" + level, 0, shipped("hetgpu-gpus-" + gpus + "-" + level));
                var request = new PodRequestParser("nvidia.com/gpu", catalog, Set.of()).withDra(lookup).parse(pod);
                assertThat(request.gpuCount()).as(level + " " + gpus).isEqualTo(gpus);
                // Several GPUs: each band bound to one NVLink set, then alone (normal: a set, then any GPUs), so a set is
                // preferred, not required.
                assertThat(request.requireNvlink()).as(level + " " + gpus).isFalse();
                assertThat(request.cards().isAny()).as(level + " " + gpus + ": any of its bands, so any card").isTrue();
                assertThat(request.claimNote()).as(level + " " + gpus).doesNotContain("not read");
            }
        }
    }

    /** The shipped claim template of that name, as the claim the resourceclaim controller makes of it. */
    private ResourceClaim shipped(String template) throws java.io.IOException {
        var text = java.nio.file.Files.readString(TEMPLATES);
        for (var document : text.split("\n---\n")) {
            if (!document.contains("kind: ResourceClaimTemplate")) {
                continue;
            }
            var parsed = io.fabric8.kubernetes.client.utils.Serialization.unmarshal(document,
                    io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate.class);
            if (parsed.getMetadata().getName().equals(template)) {
                return new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder().withNewMetadata().withNamespace("ml")
                        .withName(template + "-" + claims.size()).endMetadata().withSpec(parsed.getSpec().getSpec()).build();
            }
        }
        throw new AssertionError("no claim template " + template + " in " + TEMPLATES);
    }

    private static final java.nio.file.Path TEMPLATES = java.nio.file.Path.of("..", "manifests", "components", "dra-claim-templates",
            "claim-templates.yaml");

    /** Whether the subrequest's selectors, bands of hetgpu's tier ({@code tier >= a && tier <= b}), admit that tier. */
    private static boolean admits(io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest subrequest, int tier) {
        for (var selector : subrequest.getSelectors()) {
            var clause = java.util.regex.Pattern.compile("device\\.attributes\\[\"gpu\\.hetgpu\\.io\"\\]\\.tier (>=|<=) (\\d+)")
                    .matcher(selector.getCel().getExpression());
            int clauses = 0;
            while (clause.find()) {
                clauses++;
                int bound = Integer.parseInt(clause.group(2));
                if (clause.group(1).equals(">=") ? tier < bound : tier > bound) {
                    return false;
                }
            }
            assertThat(clauses).as(selector.getCel().getExpression()).isPositive();
        }
        return true;
    }

    /**
     * The nodes kube-scheduler can allocate the claim on are those the extender's filter passes, and the extender's scores
     * fall strictly with the index of the first alternative each node serves.
     */
    private void assertAgreement(Pod pod, int gpus) {
        var nodes = List.copyOf(machines.keySet());
        var claim = claims.getLast();
        var listed = claim.getSpec().getDevices().getRequests().getFirst().getFirstAvailable();
        // The alternatives the claim's NVLink constraint binds (request/subrequest): served only on one set.
        var linked = new java.util.HashSet<String>();
        var constraints = claim.getSpec().getDevices().getConstraints();
        (constraints == null ? List.<io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint>of() : constraints)
                .forEach(c -> linked.addAll(c.getRequests() == null || c.getRequests().isEmpty()
                        ? listed.stream().map(sub -> "gpus/" + sub.getName()).toList() : c.getRequests()));
        var firstServed = new LinkedHashMap<String, Integer>();
        slices.forEach((name, read) -> {
            int tier = read.gpus().getFirst().tier();
            boolean enough = read.gpus().size() >= gpus;
            boolean onOneSet = gpus == 1 || read.gpus().stream().allMatch(gpu -> gpu.nvlinkSets().containsKey(setSize(gpus)));
            int index = java.util.stream.IntStream.range(0, listed.size()).filter(i -> admits(listed.get(i), tier)
                    && (onOneSet || !linked.contains("gpus/" + listed.get(i).getName()))).findFirst().orElse(-1);
            if (index >= 0 && enough) {
                firstServed.put(name, index);
            }
        });
        var what = pod.getMetadata().getName() + " listing " + listed.stream().map(sub -> sub.getName()).toList();
        assertThat(firstServed).as(what + ": nodes kube-scheduler can allocate on").hasSizeGreaterThan(1);

        var filter = extender.filter(new ExtenderArgs(pod, null, nodes));
        assertThat(filter.nodeNames()).as(what + ": filter").containsExactlyInAnyOrderElementsOf(firstServed.keySet());

        var scores = new LinkedHashMap<String, Integer>();
        for (HostPriority priority : extender.prioritize(new ExtenderArgs(pod, null, List.copyOf(firstServed.keySet()))).priorities()) {
            scores.put(priority.host(), priority.score());
        }
        // Nodes served by one alternative score alike in kube-scheduler; the extender may order them either way.
        assertThat(listed).as(what + ": every alternative selects a band").allSatisfy(sub -> assertThat(sub.getSelectors()).isNotEmpty());
        for (var earlier : firstServed.keySet()) {
            for (var later : firstServed.keySet()) {
                if (firstServed.get(earlier) < firstServed.get(later)) {
                    assertThat(scores.get(earlier)).as(what + ": " + earlier + " (alternative " + firstServed.get(earlier) + ") above " + later
                            + " (alternative " + firstServed.get(later) + "), scores " + scores).isGreaterThan(scores.get(later));
                }
            }
        }
    }

    private static int setSize(int gpus) {
        return gpus <= 2 ? 2 : gpus <= 4 ? 4 : 8;
    }

    private Pod pod(String name, int priority, ResourceClaim claim) {
        claims.add(claim);
        return new PodBuilder().withNewMetadata().withNamespace("ml").withName(name).withUid("uid-" + name).endMetadata()
                .withNewSpec().withPriority(priority).addNewContainer().withName("main").withImage("trainer").endContainer()
                .withResourceClaims(new PodResourceClaimBuilder().withName("gpus").withResourceClaimName(claim.getMetadata().getName()).build())
                .endSpec().build();
    }

    private static String best(ExtenderService.Priorities answer) {
        return answer.priorities().stream().max(Comparator.comparingInt(HostPriority::score)).orElseThrow().host();
    }
}
