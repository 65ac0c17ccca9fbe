package io.hetgpu.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.dra.AllocationOutcome;
import io.hetgpu.kubescheduler.dra.DeviceId;
import io.hetgpu.kubescheduler.dra.DraLimits;
import io.hetgpu.kubescheduler.dra.HetgpuClaims;
import io.hetgpu.kubescheduler.dra.StructuredAllocator;
import io.hetgpu.kubescheduler.selection.TieBreak;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.draplacement.DraNodes;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The simulator's kube-scheduler with DRA: where hetgpu's claims and plain first-fit claims put a pod, and that its devices
 * are the allocator's on the slice the test cluster's hetgpu node publishes ({@code DraNodes}, from the node agent's
 * {@code HetgpuSlice}).
 */
class DraPlacerTest {

    private static final CardCatalog CATALOG = CardCatalog.defaults();
    /** Oldest first, so that first fit's first node is the oldest: equal hosts, so kube-scheduler's scores tie. */
    private static final List<NodeSpec> SPECS = List.of(NodeSpec.gpu("k80-1", "rack-a", "zone-1", "k80-4x"),
            NodeSpec.gpu("v100-1", "rack-a", "zone-1", "dgx1-v100"), NodeSpec.gpu("a100-1", "rack-a", "zone-1", "dgx-a100"));
    private static final ClusterInventory CLUSTER = TestClusterInventory.of(SPECS, CATALOG);
    /** kube-scheduler's selectHost keeping the first of the tied nodes: first fit over nodes too. */
    private static final TieBreak FIRST = seen -> false;

    private static DraPlacer placer(DraPlacer.Claims claims, ClusterInventory inventory) {
        return new DraPlacer(claims, false, FIRST, Preempting.NEVER,
                new DraAllocations(inventory.nodes(), CATALOG, DraLimits.DEFAULTS, DraAllocations.DEFAULT_MAX_ENTRIES));
    }

    private static Job job(int priority, int gpus) {
        return new Job(0, 0, priority == Job.HIGH_PRIORITY, priority, "", List.of(new Job.Pod(gpus, "")), 3600, java.util.Set.of(), 0, 0, "");
    }

    private static String model(ClusterInventory inventory, Placer.PodPlacement placement) {
        var node = inventory.nodes().get(placement.node());
        return node.gpus().topology().device(placement.set().positions().getFirst()).model();
    }

    @Test
    void aHighPriorityPodGetsTheNewestFreeCardWithHetgpusClaimsAndTheFirstNodesFirstDeviceWithFirstFit() {
        var high = job(Job.HIGH_PRIORITY, 1);
        var hetgpu = placer(DraPlacer.Claims.HETGPU, CLUSTER).place(high, 0, List.of(), new ClusterState(CLUSTER));
        assertThat(CLUSTER.nodes().get(hetgpu.node()).name()).isEqualTo("a100-1");
        assertThat(model(CLUSTER, hetgpu)).isEqualTo("A100");

        var firstFit = placer(DraPlacer.Claims.FIRST_FIT, CLUSTER).place(high, 0, List.of(), new ClusterState(CLUSTER));
        assertThat(CLUSTER.nodes().get(firstFit.node()).name()).isEqualTo("k80-1");
        assertThat(firstFit.set().positions()).containsExactly(0);

        // A low-priority pod with hetgpu's claims takes the oldest card, and the newest is still the high one's once the
        // A100 node's first GPUs are taken.
        var low = placer(DraPlacer.Claims.HETGPU, CLUSTER).place(job(Job.LOW_PRIORITY, 1), 0, List.of(), new ClusterState(CLUSTER));
        assertThat(model(CLUSTER, low)).isEqualTo("K80");
        var busy = new ClusterState(CLUSTER);
        int a100 = busy.indexOf("a100-1");
        busy.take(a100, 0b0000_0111, Job.LOW_PRIORITY);
        var again = placer(DraPlacer.Claims.HETGPU, CLUSTER).place(high, 0, List.of(), busy);
        assertThat(again.node()).isEqualTo(a100);
        assertThat(again.set().positions()).containsExactly(3);
    }

    @Test
    void aTwoGpuClaimOfHetgpuTakesAnNvlinkPairWhereFirstFitTakesTheFirstTwoFree() {
        var v100 = TestClusterInventory.of(List.of(SPECS.get(1)), CATALOG);
        var node = v100.nodes().getFirst();
        var links = node.gpus().topology().links();
        var attributes = DraSlices.of(node, CATALOG).devices();
        // A free GPU before a free NVLink pair (one nvlinkSet2) that it has no NVLink to: first fit pairs the two.
        long free = 0;
        search:
        for (int lone = 0; lone < 8; lone++) {
            for (int a = lone + 1; a < 8; a++) {
                for (int b = a + 1; b < 8; b++) {
                    var set = HetgpuDra.nvlinkSet(2);
                    var pa = attributes.get(a).attributes().get(set);
                    if (pa != null && pa.equals(attributes.get(b).attributes().get(set)) && !links.isNvlink(lone, a)) {
                        free = (1L << lone) | (1L << a) | (1L << b);
                        break search;
                    }
                }
            }
        }
        assertThat(free).as("a DGX-1 has such a layout").isNotZero();
        var state = new ClusterState(v100);
        state.take(0, node.gpus().healthyMask() & ~free, Job.LOW_PRIORITY);

        for (int priority : List.of(Job.HIGH_PRIORITY, Job.NORMAL_PRIORITY, Job.LOW_PRIORITY)) {
            var hetgpu = placer(DraPlacer.Claims.HETGPU, v100).place(job(priority, 2), 0, List.of(), state);
            assertThat(hetgpu.set().nvlinkConnected()).as("priority %d", priority).isTrue();
            assertThat(hetgpu.mask()).isEqualTo(free & ~Long.lowestOneBit(free));
        }
        var firstFit = placer(DraPlacer.Claims.FIRST_FIT, v100).place(job(Job.HIGH_PRIORITY, 2), 0, List.of(), state);
        assertThat(firstFit.set().nvlinkConnected()).isFalse();
        assertThat(firstFit.mask()).isEqualTo(Long.lowestOneBit(free) | Long.lowestOneBit(free & (free - 1)));
    }

    @Test
    void itsDevicesAreTheAllocatorsOnTheSliceTheTestClustersHetgpuNodePublishes() {
        var published = DraNodes.of(SPECS, CATALOG);
        var allocator = new StructuredAllocator(DraLimits.DEFAULTS);
        var classes = Map.of(HetgpuClaims.DEVICE_CLASS, HetgpuClaims.deviceClass());
        var random = new Random(7);
        var placers = Map.of(DraPlacer.Claims.FIRST_FIT, placer(DraPlacer.Claims.FIRST_FIT, CLUSTER), DraPlacer.Claims.HETGPU,
                placer(DraPlacer.Claims.HETGPU, CLUSTER));
        for (int n = 0; n < SPECS.size(); n++) {
            var slice = published.get(n).slice();
            // The same devices with the same attributes as the node agent's slice, read as kube-scheduler reads it.
            assertThat(DraSlices.of(CLUSTER.nodes().get(n), CATALOG).devices()).extracting(d -> d.name() + d.attributes())
                    .containsExactlyElementsOf(slice.devices().stream().map(d -> d.name() + d.attributes()).toList());
            int size = CLUSTER.nodes().get(n).gpus().size();
            for (int round = 0; round < 12; round++) {
                long taken = random.nextLong() & ((1L << size) - 1);
                for (var claims : DraPlacer.Claims.values()) {
                    for (int priority : List.of(Job.HIGH_PRIORITY, Job.NORMAL_PRIORITY, Job.LOW_PRIORITY)) {
                        for (int gpus : List.of(1, 2, 4)) {
                            var state = new ClusterState(CLUSTER);
                            if (taken != 0) {
                                state.take(n, taken, Job.LOW_PRIORITY);
                            }
                            var placement = placers.get(claims).placeOn(job(priority, gpus), 0, List.of(), state, n);
                            var allocated = new HashSet<DeviceId>();
                            for (int p = 0; p < size; p++) {
                                if ((taken & (1L << p)) != 0) {
                                    allocated.add(new DeviceId(slice.driver(), slice.pool(), HetgpuDra.deviceName(p)));
                                }
                            }
                            var claim = claims == DraPlacer.Claims.HETGPU
                                    ? HetgpuClaims.claim("ns", "c", DraPlacer.level(priority), gpus) : HetgpuClaims.plain("ns", "c", gpus);
                            var outcome = allocator.allocate(slice.nodeName(), List.of(slice), classes, allocated, List.of(claim));
                            var what = claims + " " + priority + " " + gpus + " GPUs, taken " + Long.toBinaryString(taken);
                            if (outcome instanceof AllocationOutcome.Allocated done) {
                                long mask = 0;
                                for (var result : done.claims().getFirst().results()) {
                                    mask |= 1L << HetgpuDra.positionOf(result.device()).orElseThrow();
                                }
                                assertThat(placement).as(what).isNotNull();
                                assertThat(placement.mask()).as(what).isEqualTo(mask);
                            } else {
                                assertThat(placement).as(what).isNull();
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void theRememberedAnswersAreBoundedAndAgreeWithTheAllocator() {
        var allocations = new DraAllocations(CLUSTER.nodes(), CATALOG, DraLimits.DEFAULTS, 4);
        var claim = HetgpuClaims.claim("sim", "gpus", HetgpuClaims.Priority.HIGH, 2);
        int v100 = 1;
        for (long free = 0; free < 256; free++) {
            var remembered = allocations.allocate(0, claim, v100, free);
            var fresh = allocations.compute(claim, v100, free);
            assertThat(remembered).isEqualTo(fresh.mask() == 0 ? null : fresh);
            assertThat(allocations.allocate(0, claim, v100, free)).isEqualTo(remembered);
        }
        assertThat(allocations.size()).isLessThanOrEqualTo(4);
    }

    @Test
    void theLevelIsTheShippedAdmissionPolicysThresholds() {
        assertThat(DraPlacer.level(Job.HIGH_PRIORITY)).isEqualTo(HetgpuClaims.Priority.HIGH);
        assertThat(DraPlacer.level(999)).isEqualTo(HetgpuClaims.Priority.NORMAL);
        assertThat(DraPlacer.level(0)).isEqualTo(HetgpuClaims.Priority.NORMAL);
        assertThat(DraPlacer.level(Job.LOW_PRIORITY)).isEqualTo(HetgpuClaims.Priority.LOW);
        assertThat(DraPlacer.level(Integer.MIN_VALUE)).isEqualTo(HetgpuClaims.Priority.LOW);
    }
}
