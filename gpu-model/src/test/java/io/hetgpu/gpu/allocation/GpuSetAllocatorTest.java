package io.hetgpu.gpu.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.PcieRelation;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

class GpuSetAllocatorTest {

    private final LinkMatrix dgx1 = Fixtures.matrix(Fixtures.DGX1_V100_TOPO);
    private final GpuSetAllocator allocator = new GpuSetAllocator(dgx1);

    @Test
    void pairOnDgx1TakesADoubleNvlinkPair() {
        var set = allocator.choose(DeviceMask.all(8), 0, 2, false).orElseThrow();

        assertThat(set.linkScore()).isEqualTo(200);
        assertThat(set.positions()).containsExactly(0, 3);
        assertThat(set.nvlinkConnected()).isTrue();
    }

    @Test
    void quadOnDgx1IsOneFullyConnectedHalf() {
        var set = allocator.choose(DeviceMask.all(8), 0, 4, false).orElseThrow();

        // G0-G3 are fully connected: 0-1 NV1, 0-2 NV1, 0-3 NV2, 1-2 NV2, 1-3 NV1, 2-3 NV2 = 9 links.
        assertThat(set.positions()).containsExactly(0, 1, 2, 3);
        assertThat(set.linkScore()).isEqualTo(900);
    }

    @Test
    void singleGpuKeepsTheBestPairsFree() {
        // Free: 0,1,3 — taking 1 leaves the NV2 pair 0-3 intact; taking 0 or 3 would break it.
        var set = allocator.choose(DeviceMask.of(List.of(0, 1, 3)), 0, 1, false).orElseThrow();

        assertThat(set.positions()).containsExactly(1);
        assertThat(set.leftoverScore()).isEqualTo(200);
    }

    @Test
    void mustIncludeDevicesAreAlwaysInTheSet() {
        var set = allocator.choose(DeviceMask.all(8), DeviceMask.of(List.of(5)), 2, false).orElseThrow();

        assertThat(set.positions()).contains(5);
        assertThat(set.linkScore()).isEqualTo(200); // 5 has NV2 to 1 and 6
    }

    @Test
    void nvlinkRequirementRejectsSetsSplitAcrossSys() {
        // 0 and 5 reach each other only over SYS.
        assertThat(allocator.choose(DeviceMask.of(List.of(0, 5)), 0, 2, true)).isEmpty();
        assertThat(allocator.choose(DeviceMask.of(List.of(0, 5)), 0, 2, false)).isPresent();
        // 0, 4, 5: 0-4 NV2 and 4-5 NV1 connect all three though 0-5 is SYS.
        assertThat(allocator.choose(DeviceMask.of(List.of(0, 4, 5)), 0, 3, true).orElseThrow().nvlinkConnected()).isTrue();
    }

    @Test
    void tooFewDevicesGivesNothing() {
        assertThat(allocator.choose(DeviceMask.of(List.of(1, 2)), 0, 3, false)).isEmpty();
        assertThat(allocator.choose(DeviceMask.all(8), DeviceMask.of(List.of(1, 2, 3)), 2, false)).isEmpty();
    }

    @Test
    void matchesExhaustiveSearchOnRandomAvailability() {
        var random = new Random(42);
        for (int trial = 0; trial < 2000; trial++) {
            long available = random.nextLong() & DeviceMask.all(8);
            long must = available & random.nextLong() & random.nextLong();
            int size = 1 + random.nextInt(8);
            boolean nvlink = random.nextBoolean();
            assertThat(allocator.choose(available & ~must, must, size, nvlink))
                    .as("available %s must %s size %d nvlink %s", Long.toBinaryString(available), Long.toBinaryString(must), size, nvlink)
                    .isEqualTo(bruteForce(dgx1, available | must, must, size, nvlink));
        }
    }

    @Test
    void matchesExhaustiveSearchOnRandomSixteenGpuMatrices() {
        var random = new Random(7);
        for (int trial = 0; trial < 30; trial++) {
            var matrix = randomMatrix(random, 12);
            var sut = new GpuSetAllocator(matrix);
            long available = random.nextLong() & DeviceMask.all(12);
            int size = 1 + random.nextInt(6);
            assertThat(sut.choose(available, 0, size, false)).isEqualTo(bruteForce(matrix, available, 0, size, false));
        }
    }

    /** Independent reference: every subset of the pool as a bit mask, scored from scratch. */
    static Optional<GpuSet> bruteForce(LinkMatrix links, long pool, long must, int size, boolean nvlink) {
        var scorer = new GpuSetAllocator(links);
        GpuSet best = null;
        for (long set = 0; set < (1L << links.size()); set++) {
            if ((set & ~pool) != 0 || (set & must) != must || Long.bitCount(set) != size) {
                continue;
            }
            boolean connected = NvlinkIsland.among(links, set).size() <= 1;
            if (nvlink && !connected) {
                continue;
            }
            var candidate = new GpuSet(DeviceMask.positions(set), scorer.linkScore(set), scorer.linkScore(pool & ~set), connected);
            if (best == null || candidate.linkScore() > best.linkScore()
                    || candidate.linkScore() == best.linkScore() && candidate.leftoverScore() > best.leftoverScore()
                    || candidate.linkScore() == best.linkScore() && candidate.leftoverScore() == best.leftoverScore()
                    && lexicographicallyBefore(candidate.positions(), best.positions())) {
                best = candidate;
            }
        }
        return Optional.ofNullable(best);
    }

    private static boolean lexicographicallyBefore(List<Integer> a, List<Integer> b) {
        for (int i = 0; i < a.size(); i++) {
            int c = Integer.compare(a.get(i), b.get(i));
            if (c != 0) {
                return c < 0;
            }
        }
        return false;
    }

    private static LinkMatrix randomMatrix(Random random, int size) {
        var builder = LinkMatrix.builder(size, new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS));
        var relations = PcieRelation.values();
        for (int i = 0; i < size; i++) {
            for (int j = i + 1; j < size; j++) {
                builder.set(i, j, random.nextInt(3) == 0
                        ? new GpuLink.Nvlink(1 + random.nextInt(3), false)
                        : new GpuLink.Pcie(relations[random.nextInt(relations.length)]));
            }
        }
        return builder.build();
    }
}
