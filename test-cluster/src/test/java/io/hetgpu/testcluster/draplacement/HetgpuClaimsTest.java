package io.hetgpu.testcluster.draplacement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.dra.AllocationOutcome;
import io.hetgpu.kubescheduler.dra.DeviceRequest;
import io.hetgpu.kubescheduler.dra.DraLimits;
import io.hetgpu.kubescheduler.dra.HetgpuClaims;
import io.hetgpu.kubescheduler.dra.HetgpuClaims.Priority;
import io.hetgpu.kubescheduler.dra.MatchAttribute;
import io.hetgpu.kubescheduler.dra.StructuredAllocator;
import io.hetgpu.testcluster.cluster.NodeSpec;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class HetgpuClaimsTest {

    private static List<String> alternatives(io.hetgpu.kubescheduler.dra.Claim claim) {
        assertThat(claim.requests()).hasSize(1);
        return claim.requests().get(0) instanceof DeviceRequest.FirstAvailable first
                ? first.subRequests().stream().map(DeviceRequest.SubRequest::name).toList() : List.of();
    }

    private static List<String> devices(io.hetgpu.kubescheduler.dra.ClaimAllocation allocation) {
        return allocation.results().stream().map(r -> r.device()).toList();
    }

    @Test
    void theNamesItRepeatsAreTheSharedContracts() {
        assertThat(HetgpuClaims.DRIVER).isEqualTo(io.hetgpu.gpu.inventory.HetgpuDra.DRIVER);
        assertThat(HetgpuClaims.TIER).isEqualTo(io.hetgpu.gpu.inventory.HetgpuDra.TIER);
        assertThat(HetgpuClaims.NVLINK_SET_SIZES).isEqualTo(io.hetgpu.gpu.allocation.NvlinkSets.SIZES);
        for (int size : io.hetgpu.gpu.allocation.NvlinkSets.SIZES) {
            assertThat(HetgpuClaims.nvlinkSet(size)).isEqualTo(io.hetgpu.gpu.inventory.HetgpuDra.nvlinkSet(size));
        }
    }

    @Test
    void theGenerationsOfAClaimOfSeveralGpusAreTheOnesTheExtenderRanksBy() {
        var generations = io.hetgpu.gpu.tier.CardGeneration.NEWEST_FIRST;
        assertThat(HetgpuClaims.NVLINK_BANDS).hasSameSizeAs(generations);
        for (int i = 0; i < generations.size(); i++) {
            var band = HetgpuClaims.NVLINK_BANDS.get(i);
            var generation = generations.get(i);
            // The oldest band's selector has no lower bound, the newest's no upper one.
            assertThat(band.lowest()).as(generation.name()).isEqualTo(generation.lowestTier() == Integer.MIN_VALUE ? 0 : generation.lowestTier());
            assertThat(band.highest().orElse(Integer.MAX_VALUE)).as(generation.name()).isEqualTo(generation.highestTier());
        }
        for (int tier = -5; tier <= 120; tier++) {
            int t = tier;
            assertThat(IntStream.range(0, generations.size()).filter(i -> HetgpuClaims.NVLINK_BANDS.get(i).holds(t))
                    .findFirst().orElse(-1)).as("tier %d", tier).isEqualTo(io.hetgpu.gpu.tier.CardGeneration.age(tier));
        }
    }

    @Test
    void highPriorityListsTheNewestBandFirstLowTheOldestAndNormalAsksForAny() {
        assertThat(alternatives(HetgpuClaims.claim("ns", "c", Priority.HIGH, 1))).containsExactly("tier-100-up", "tier-84-99", "tier-70-83",
                "tier-55-69", "tier-45-54", "tier-40-44", "tier-25-39", "tier-0-24");
        assertThat(alternatives(HetgpuClaims.claim("ns", "c", Priority.LOW, 1))).startsWith("tier-0-24", "tier-25-39").endsWith("tier-100-up");
        var normal = HetgpuClaims.claim("ns", "c", Priority.NORMAL, 1);
        assertThat(normal.requests().get(0)).isInstanceOfSatisfying(DeviceRequest.Exactly.class, e -> {
            assertThat(e.request().deviceClassName()).isEqualTo("gpu.hetgpu.io");
            assertThat(e.request().selectors()).isEmpty();
            assertThat(e.request().count()).isEqualTo(1);
        });
        var first = (DeviceRequest.FirstAvailable) HetgpuClaims.claim("ns", "c", Priority.HIGH, 2).requests().get(0);
        assertThat(first.subRequests().get(2).request().selectors())
                .containsExactly("device.attributes[\"gpu.hetgpu.io\"].tier >= 45 && device.attributes[\"gpu.hetgpu.io\"].tier <= 83");
        assertThat(first.subRequests().get(2).request().count()).isEqualTo(2);
        assertThat(HetgpuClaims.templateName(4, Priority.LOW)).isEqualTo("hetgpu-gpus-4-low");
    }

    @Test
    void severalGpusTakeTheLevelsGenerationFirstAndWithinItTheNvlinkSetOfTheSmallestSizeThatHoldsThem() {
        assertThat(HetgpuClaims.claim("ns", "c", Priority.NORMAL, 1).constraints()).isEmpty();
        assertThat(HetgpuClaims.claim("ns", "c", Priority.HIGH, 1).constraints()).isEmpty();
        assertThat(alternatives(HetgpuClaims.claim("ns", "c", Priority.HIGH, 2))).containsExactly("tier-84-up-nvlink", "tier-84-up",
                "tier-45-83-nvlink", "tier-45-83", "tier-40-44-nvlink", "tier-40-44", "tier-0-39-nvlink", "tier-0-39");
        assertThat(alternatives(HetgpuClaims.claim("ns", "c", Priority.LOW, 8))).containsExactly("tier-0-39-nvlink", "tier-0-39",
                "tier-40-44-nvlink", "tier-40-44", "tier-45-83-nvlink", "tier-45-83", "tier-84-up-nvlink", "tier-84-up");
        assertThat(alternatives(HetgpuClaims.claim("ns", "c", Priority.NORMAL, 4))).containsExactly("nvlink", "any");
        // The constraint binds the -nvlink alternatives by name, never the plain band: its GPUs need not share a set.
        assertThat(HetgpuClaims.claim("ns", "c", Priority.LOW, 2).constraints()).containsExactly(new MatchAttribute(List.of(
                "gpus/tier-0-39-nvlink", "gpus/tier-40-44-nvlink", "gpus/tier-45-83-nvlink", "gpus/tier-84-up-nvlink"),
                "gpu.hetgpu.io/nvlinkSet2"));
        assertThat(HetgpuClaims.claim("ns", "c", Priority.NORMAL, 4).constraints())
                .containsExactly(new MatchAttribute(List.of("gpus/nvlink"), "gpu.hetgpu.io/nvlinkSet4"));
        // A band and its -nvlink twin select the same tiers.
        var low = ((DeviceRequest.FirstAvailable) HetgpuClaims.claim("ns", "c", Priority.LOW, 4).requests().get(0)).subRequests();
        for (int i = 0; i < low.size(); i += 2) {
            assertThat(low.get(i).request()).isEqualTo(low.get(i + 1).request());
        }
        var any = ((DeviceRequest.FirstAvailable) HetgpuClaims.claim("ns", "c", Priority.NORMAL, 4).requests().get(0)).subRequests().getLast();
        assertThat(any.request().selectors()).isEmpty();
        assertThat(any.request().count()).isEqualTo(4);
        assertThat(HetgpuClaims.nvlinkAttribute(3)).contains("gpu.hetgpu.io/nvlinkSet4");
        assertThat(HetgpuClaims.nvlinkAttribute(8)).contains("gpu.hetgpu.io/nvlinkSet8");
        assertThat(HetgpuClaims.nvlinkAttribute(9)).isEmpty();
        assertThatThrownBy(() -> HetgpuClaims.claim("ns", "c", Priority.HIGH, 0)).hasMessageContaining("at least 1 GPU, got 0");
    }

    @Test
    void theClaimWrittenAsATemplateReadsBackAsTheSameClaim() {
        for (var priority : Priority.values()) {
            var claim = HetgpuClaims.claim("ns", "c", priority, 4);
            var template = ClaimObjects.template("ns", "t", claim);
            var object = new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder().withNewMetadata().withNamespace("ns")
                    .withName("c").endMetadata().withSpec(template.getSpec().getSpec()).build();
            assertThat(io.hetgpu.testcluster.scheduler.DraObjects.claim(object)).as(priority.name())
                    .isEqualTo(new io.hetgpu.testcluster.scheduler.DraObjects.ClaimReading.Read(claim));
        }
    }

    @Test
    void theBandsHoldEveryTierOfTheCardTableOnce() {
        for (var card : CardCatalog.defaults().cards()) {
            assertThat(HetgpuClaims.BANDS.stream().filter(band -> band.holds(card.rank()))).as(card.model()).hasSize(1);
        }
        for (var bands : List.of(HetgpuClaims.BANDS, HetgpuClaims.NVLINK_BANDS)) {
            assertThat(IntStream.rangeClosed(0, 300).filter(tier -> bands.stream().filter(b -> b.holds(tier)).count() != 1)).isEmpty();
        }
        // Each band twice, a claim of several GPUs stays within DRA's 8 alternatives.
        assertThat(HetgpuClaims.NVLINK_BANDS).hasSize(4);
        // One generation per band of a claim of several GPUs: each of the demo's NVLink cards has one of its own.
        var catalog = CardCatalog.defaults();
        for (var pair : List.of(List.of("H100", "A100"), List.of("A100", "V100"), List.of("V100", "T4"))) {
            var newer = catalog.cards().stream().filter(c -> c.model().equals(pair.get(0))).findFirst().orElseThrow().rank();
            var older = catalog.cards().stream().filter(c -> c.model().equals(pair.get(1))).findFirst().orElseThrow().rank();
            assertThat(HetgpuClaims.NVLINK_BANDS.stream().filter(b -> b.holds(newer) && b.holds(older))).as(pair.toString()).isEmpty();
        }
    }

    @Test
    void onADgx1HetgpusClaimKeepsFourGpusInOneNvlinkSetWhereFirstFitSplitsThemAndTakesAnyFourWhenNoSetIsWhole() {
        var node = DraNodes.of(List.of(NodeSpec.gpu("dgx1", "r", "z", "dgx1-v100")), CardCatalog.defaults()).get(0);
        var allocator = new StructuredAllocator(DraLimits.DEFAULTS);
        var classes = Map.of(HetgpuClaims.DEVICE_CLASS, HetgpuClaims.deviceClass());
        // GPUs 0 and 5 taken: first fit's next four are 1, 2, 3, 4, which span both of the DGX-1's NVLink quads.
        var taken = Set.of(new io.hetgpu.kubescheduler.dra.DeviceId("gpu.hetgpu.io", "dgx1", "gpu-0"),
                new io.hetgpu.kubescheduler.dra.DeviceId("gpu.hetgpu.io", "dgx1", "gpu-5"));
        var plain = (AllocationOutcome.Allocated) allocator.allocate("dgx1", List.of(node.slice()), classes, taken,
                List.of(HetgpuClaims.plain("ns", "p", 4)));
        assertThat(node.nvlinkConnected(devices(plain.claims().get(0)))).as("first fit's 1-4").isFalse();
        // GPU 1 taken, one quad whole (4-7): hetgpu's claim takes it, by its NVLink-bound alternative.
        var oneTaken = Set.of(new io.hetgpu.kubescheduler.dra.DeviceId("gpu.hetgpu.io", "dgx1", "gpu-1"));
        assertThat(allocator.allocate("dgx1", List.of(node.slice()), classes, oneTaken, List.of(HetgpuClaims.claim("ns", "h", Priority.NORMAL, 4))))
                .isInstanceOfSatisfying(AllocationOutcome.Allocated.class, a -> {
                    assertThat(devices(a.claims().get(0))).containsExactly("gpu-4", "gpu-5", "gpu-6", "gpu-7");
                    assertThat(a.claims().get(0).results()).allSatisfy(r -> assertThat(r.request()).isEqualTo("gpus/nvlink"));
                });
        // Two GPUs of each quad free, so no set of four is whole: hetgpu's claim takes any four rather than wait.
        assertThat(allocator.allocate("dgx1", List.of(node.slice()), classes, taken, List.of(HetgpuClaims.claim("ns", "h", Priority.NORMAL, 4))))
                .isInstanceOfSatisfying(AllocationOutcome.Allocated.class, a -> {
                    assertThat(node.nvlinkConnected(devices(a.claims().get(0)))).isFalse();
                    assertThat(a.claims().get(0).results()).allSatisfy(r -> assertThat(r.request()).isEqualTo("gpus/any"));
                });
        // A low-priority claim: the V100s' band bound to a set where one is whole, the same band alone where none is.
        assertThat(allocator.allocate("dgx1", List.of(node.slice()), classes, oneTaken, List.of(HetgpuClaims.claim("ns", "l", Priority.LOW, 4))))
                .isInstanceOfSatisfying(AllocationOutcome.Allocated.class, a -> assertThat(a.claims().get(0).results())
                        .allSatisfy(r -> assertThat(r.request()).isEqualTo("gpus/tier-40-44-nvlink")));
        assertThat(allocator.allocate("dgx1", List.of(node.slice()), classes, taken, List.of(HetgpuClaims.claim("ns", "l", Priority.LOW, 4))))
                .isInstanceOfSatisfying(AllocationOutcome.Allocated.class, a -> assertThat(a.claims().get(0).results())
                        .allSatisfy(r -> assertThat(r.request()).isEqualTo("gpus/tier-40-44")));
    }
}
