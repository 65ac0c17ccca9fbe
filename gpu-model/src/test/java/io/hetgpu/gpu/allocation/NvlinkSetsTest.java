package io.hetgpu.gpu.allocation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.profile.ProfileLoader;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class NvlinkSetsTest {

    @Test
    void aDgx1IsCutIntoDoubleLinkedPairsAndItsTwoQuads() {
        var links = Fixtures.matrix(Fixtures.DGX1_V100_TOPO);
        var pairs = NvlinkSets.of(links, 2);
        assertThat(pairs.sets()).hasSize(4);
        for (var pair : pairs.sets()) {
            var p = pair.positions();
            assertThat(links.link(p.get(0), p.get(1)).isNvlink()).as("pair %s", p).isTrue();
        }
        assertThat(NvlinkSets.of(links, 4).sets()).extracting(GpuSet::positions)
                .containsExactlyInAnyOrder(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7));
        assertThat(NvlinkSets.of(links, 8).sets()).extracting(GpuSet::positions).containsExactly(List.of(0, 1, 2, 3, 4, 5, 6, 7));
    }

    @Test
    void setsOfOneSizeNeverShareAGpu() throws Exception {
        for (var name : List.of("dgx1-v100", "dgx1-p100", "dgx-a100", "dgx2-v100", "mixed")) {
            var links = ProfileLoader.load(name).links();
            for (var sets : NvlinkSets.offeredBy(links)) {
                var seen = new HashSet<Integer>();
                for (var set : sets.sets()) {
                    assertThat(set.size()).isEqualTo(sets.size());
                    assertThat(set.nvlinkConnected()).as("%s size %d", name, sets.size()).isTrue();
                    for (int position : set.positions()) {
                        assertThat(seen.add(position)).as("%s: GPU %d in two sets of %d", name, position, sets.size()).isTrue();
                    }
                }
            }
        }
    }

    @Test
    void aPcieOnlyNodeOffersNoSetAndASmallNodeNoLargeSize() throws Exception {
        var k80 = ProfileLoader.load("t4-4x").links();
        assertThat(NvlinkSets.offeredBy(k80)).extracting(NvlinkSets::size).containsExactly(2, 4);
        assertThat(NvlinkSets.offeredBy(k80)).allSatisfy(sets -> assertThat(sets.sets()).isEmpty());
        assertThat(NvlinkSets.of(k80, 2).setOf(0)).isEmpty();
    }

    @Test
    void identifiersFollowTheSetsOrder() {
        var sets = NvlinkSets.of(Fixtures.matrix(Fixtures.DGX1_V100_TOPO), 4);
        int first = sets.sets().get(0).positions().get(0);
        int second = sets.sets().get(1).positions().get(0);
        assertThat(sets.setOf(first)).contains("0");
        assertThat(sets.setOf(second)).contains("1");
        assertThatThrownBy(() -> NvlinkSets.of(Fixtures.matrix(Fixtures.DGX1_V100_TOPO), 1))
                .hasMessageContaining("at least 2");
    }
}
