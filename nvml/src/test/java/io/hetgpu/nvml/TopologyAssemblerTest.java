package io.hetgpu.nvml;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.GpuArchitecture;
import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.PcieRelation;
import io.hetgpu.nvml.NvmlDriver.RemoteEnd;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class TopologyAssemblerTest {

    @ParameterizedTest(name = "remote end reported as {0}")
    @EnumSource(value = RemoteEnd.class, names = {"GPU", "UNKNOWN"})
    void dgx1V100LinksMatchThePublishedCubeMesh(RemoteEnd remoteEnd) {
        var topology = TopologyAssembler.assemble(FakeNvmlDriver.dgx1V100(remoteEnd));

        assertThat(topology.links()).isEqualTo(Fixtures.matrix(Fixtures.DGX1_V100_TOPO));
        assertThat(List.of(1, 2, 3, 4)).allMatch(j -> topology.links().isNvlink(0, j));
        assertThat(List.of(5, 6, 7)).noneMatch(j -> topology.links().isNvlink(0, j));
    }

    @Test
    void devicesCarryEveryFieldNvmlReported() {
        var topology = TopologyAssembler.assemble(FakeNvmlDriver.dgx1V100(RemoteEnd.GPU));
        var gpu5 = topology.device(5);

        assertThat(topology.driverVersion()).isEqualTo("470.256.02");
        assertThat(topology.cudaDriverVersion()).isEqualTo("11.4");
        assertThat(gpu5.index()).isEqualTo(5);
        assertThat(gpu5.uuid()).isEqualTo("GPU-00000086-1111-2222-3333-000000000005");
        assertThat(gpu5.product()).isEqualTo("Tesla V100-SXM2-16GB");
        assertThat(gpu5.model()).isEqualTo("V100");
        assertThat(gpu5.family()).isEqualTo(GpuArchitecture.VOLTA);
        assertThat(gpu5.computeCapability()).hasToString("7.0");
        assertThat(gpu5.memoryMiB()).isEqualTo(16160);
        assertThat(gpu5.pciBusId()).isEqualTo("0000:86:00.0");
        assertThat(gpu5.numaNode()).isEqualTo(1);
        assertThat(gpu5.isHealthy()).isTrue();
    }

    @ParameterizedTest(name = "remote end reported as {0}")
    @EnumSource(value = RemoteEnd.class, names = {"NVSWITCH", "UNKNOWN"})
    void dgxA100IsAllToAllThroughTheSwitchFabric(RemoteEnd remoteEnd) {
        var topology = TopologyAssembler.assemble(FakeNvmlDriver.dgxA100(remoteEnd, Map.of()));

        for (int i = 0; i < 8; i++) {
            for (int j = 0; j < 8; j++) {
                if (i != j) {
                    assertThat(topology.links().link(i, j)).isEqualTo(new GpuLink.Nvlink(12, true));
                }
            }
        }
        assertThat(topology.device(0).model()).isEqualTo("A100");
        assertThat(topology.device(0).memoryMiB()).isEqualTo(81920);
    }

    @Test
    void aGpuWithLinksDownReachesTheFabricAtItsOwnBandwidth() {
        var topology = TopologyAssembler.assemble(FakeNvmlDriver.dgxA100(RemoteEnd.NVSWITCH, Map.of(3, 2)));

        assertThat(topology.links().link(3, 5)).isEqualTo(new GpuLink.Nvlink(10, true));
        assertThat(topology.links().link(0, 5)).isEqualTo(new GpuLink.Nvlink(12, true));
        assertThat(topology.links().link(3, 5).token()).isEqualTo("NVS10");
    }

    @Test
    void k80BoardsPairUpAndTheRestFollowsThePcieTree() {
        var topology = TopologyAssembler.assemble(FakeNvmlDriver.k80Box());

        assertThat(topology.hasNvlink()).isFalse();
        assertThat(topology.links().link(0, 1)).isEqualTo(new GpuLink.Pcie(PcieRelation.SAME_BOARD));
        assertThat(topology.links().link(6, 7)).isEqualTo(new GpuLink.Pcie(PcieRelation.SAME_BOARD));
        assertThat(topology.links().link(1, 2)).isEqualTo(new GpuLink.Pcie(PcieRelation.HOST_BRIDGE));
        assertThat(topology.links().link(3, 4)).isEqualTo(new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS));
        assertThat(topology.device(0).model()).isEqualTo("K80");
        assertThat(topology.device(0).family()).isEqualTo(GpuArchitecture.KEPLER);
    }

    @Test
    void aFailingAncestorQueryDegradesToAcrossSockets() {
        var k80 = FakeNvmlDriver.k80Box();
        var failing = new FakeNvmlDriver(k80.devices, k80.links, (a, b) -> {
            throw new NvmlException("nvmlDeviceGetTopologyCommonAncestor", 3, "Not Supported");
        });

        var topology = TopologyAssembler.assemble(failing);

        assertThat(topology.links().link(0, 1)).isEqualTo(new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS));
    }

    @Test
    void everyNvmlTopologyLevelMapsToItsPcieRelation() {
        assertThat(NvmlTopologyLevel.of(0).relation()).isEqualTo(PcieRelation.SAME_BOARD);
        assertThat(NvmlTopologyLevel.of(10).relation()).isEqualTo(PcieRelation.SINGLE_SWITCH);
        assertThat(NvmlTopologyLevel.of(20).relation()).isEqualTo(PcieRelation.MULTIPLE_SWITCHES);
        assertThat(NvmlTopologyLevel.of(30).relation()).isEqualTo(PcieRelation.HOST_BRIDGE);
        assertThat(NvmlTopologyLevel.of(40).relation()).isEqualTo(PcieRelation.SAME_NUMA_NODE);
        assertThat(NvmlTopologyLevel.of(50).relation()).isEqualTo(PcieRelation.ACROSS_SOCKETS);
    }

    @Test
    void busIdsAreWrittenTheWaySysfsWritesThem() {
        assertThat(TopologyAssembler.canonicalBusId("00000000:8A:00.0")).isEqualTo("0000:8a:00.0");
        assertThat(TopologyAssembler.canonicalBusId("0001:8a:00.0")).isEqualTo("0001:8a:00.0");
        assertThat(TopologyAssembler.canonicalBusId("garbage")).isEqualTo("garbage");
    }
}
