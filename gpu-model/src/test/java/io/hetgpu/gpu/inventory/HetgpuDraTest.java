package io.hetgpu.gpu.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.inventory.HetgpuDra.Value;
import io.hetgpu.gpu.profile.ProfileLoader;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HetgpuDraTest {

    @Test
    void aDgx1GpuCarriesItsCardItsTierAndItsNvlinkSets() {
        var devices = HetgpuDra.devices(Fixtures.dgx1V100(), CardCatalog.defaults(), Map.of(0, "pci0000:00"));
        assertThat(devices).hasSize(8);
        var first = devices.get(0);
        assertThat(first.name()).isEqualTo("gpu-0");
        assertThat(first.attributes())
                .containsEntry(HetgpuDra.MODEL, new Value.Text("V100"))
                .containsEntry(HetgpuDra.FAMILY, new Value.Text("volta"))
                .containsEntry(HetgpuDra.COMPUTE_CAPABILITY, new Value.Version("7.0.0"))
                .containsEntry(HetgpuDra.PCIE_ROOT, new Value.Text("pci0000:00"))
                .containsKeys(HetgpuDra.UUID, HetgpuDra.TIER, HetgpuDra.nvlinkSet(2), HetgpuDra.nvlinkSet(4), HetgpuDra.nvlinkSet(8));
        assertThat(devices.get(1).attributes()).doesNotContainKey(HetgpuDra.PCIE_ROOT);
        assertThat(first.memoryBytes()).isEqualTo(Fixtures.dgx1V100().device(0).memoryMiB() * 1024 * 1024);
        var quadOfFirst = first.attributes().get(HetgpuDra.nvlinkSet(4));
        assertThat(devices.subList(0, 4)).allSatisfy(gpu -> assertThat(gpu.attributes().get(HetgpuDra.nvlinkSet(4))).isEqualTo(quadOfFirst));
        assertThat(devices.get(4).attributes().get(HetgpuDra.nvlinkSet(4))).isNotEqualTo(quadOfFirst);
    }

    @Test
    void newerCardsHaveHigherTiersAndPcieBoxesNoNvlinkSets() throws Exception {
        var catalog = CardCatalog.defaults();
        var mixed = HetgpuDra.devices(ProfileLoader.load("k80-4x").topology("k80"), catalog, Map.of());
        var newest = HetgpuDra.devices(ProfileLoader.load("dgx-h100").topology("h100"), catalog, Map.of());
        assertThat(((Value.Int) newest.get(0).attributes().get(HetgpuDra.TIER)).value())
                .isGreaterThan(((Value.Int) mixed.get(0).attributes().get(HetgpuDra.TIER)).value());
        assertThat(mixed).allSatisfy(gpu -> assertThat(gpu.attributes()).doesNotContainKeys(
                HetgpuDra.nvlinkSet(2), HetgpuDra.nvlinkSet(4)));
    }

    @Test
    void driverVersionsAreSemanticOrLeftOut() {
        assertThat(HetgpuDra.semanticVersion("535.104.05")).contains("535.104.5");
        assertThat(HetgpuDra.semanticVersion("550")).contains("550.0.0");
        assertThat(HetgpuDra.semanticVersion("simulated")).isEmpty();
        assertThat(HetgpuDra.semanticVersion("1.2.3.4")).isEmpty();
    }

    @Test
    void deviceNamesRoundTripAndForeignNamesAreRefused() {
        assertThat(HetgpuDra.positionOf(HetgpuDra.deviceName(7))).contains(7);
        assertThat(HetgpuDra.positionOf("gpu-07")).isEmpty();
        assertThat(HetgpuDra.positionOf("gpu-99999")).isEmpty();
        assertThat(HetgpuDra.positionOf("mig-1")).isEmpty();
        assertThat(HetgpuDra.positionOf(null)).isEmpty();
    }
}
