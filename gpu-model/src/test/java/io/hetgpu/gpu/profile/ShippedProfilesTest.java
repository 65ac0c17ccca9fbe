package io.hetgpu.gpu.profile;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.GpuArchitecture;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.PcieRelation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.FieldSource;

/** Each shipped profile against the topology its machine's vendor publishes (NVLink links per GPU pair, PCIe switches). */
class ShippedProfilesTest {

    static final List<String> SHIPPED = ProfileLoader.SHIPPED;

    @ParameterizedTest
    @FieldSource("SHIPPED")
    void loadsUnderItsOwnNameWithDistinctBusIds(String name) throws Exception {
        var profile = ProfileLoader.load(name);

        assertThat(profile.name()).isEqualTo(name);
        assertThat(profile.description()).isNotBlank();
        assertThat(profile.devices()).extracting(ProfileDevice::pciBusId).doesNotHaveDuplicates();
        assertThat(profile.devices()).allSatisfy(device -> assertThat(device.numaNode()).isNotNegative());
        var topology = profile.topology("node-1");
        assertThat(topology.devices()).allSatisfy(device -> assertThat(device.family()).isNotEqualTo(GpuArchitecture.UNKNOWN));
    }

    @Test
    void dgx1V100IsTheHybridCubeMeshOfDesignMd() throws Exception {
        var links = ProfileLoader.load("dgx1-v100").links();

        assertThat(links).isEqualTo(Fixtures.matrix(Fixtures.DGX1_V100_TOPO));
        assertThat(nvlinkPeers(links, 0)).containsExactly(entry(1, 1), entry(2, 1), entry(3, 2), entry(4, 2));
        for (int gpu = 0; gpu < 8; gpu++) {
            // NVLink 2: six links per GPU, to exactly four peers.
            assertThat(nvlinkPeers(links, gpu).values().stream().mapToInt(Integer::intValue).sum()).as("links of GPU%d", gpu).isEqualTo(6);
            assertThat(nvlinkPeers(links, gpu)).hasSize(4);
        }
    }

    @Test
    void dgx1P100IsTwoQuadsJoinedAcross() throws Exception {
        var profile = ProfileLoader.load("dgx1-p100");
        var links = profile.links();

        for (int i = 0; i < 8; i++) {
            for (int j = i + 1; j < 8; j++) {
                boolean sameQuad = i / 4 == j / 4;
                var expected = sameQuad || j == i + 4 ? new GpuLink.Nvlink(1, false) : new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS);
                assertThat(links.link(i, j)).as("G%d-G%d", i, j).isEqualTo(expected);
            }
        }
        assertThat(profile.devices()).allSatisfy(d -> assertThat(d.product()).isEqualTo("Tesla P100-SXM2-16GB"));
    }

    @ParameterizedTest
    @CsvSource({"dgx-a100, 8, NVS12, A100", "dgx-h100, 8, NVS18, H100", "dgx2-v100, 16, NVS6, V100"})
    void nvswitchMachinesAreAllToAll(String name, int gpus, String token, String model) throws Exception {
        var topology = ProfileLoader.load(name).topology("n1");

        assertThat(topology.size()).isEqualTo(gpus);
        assertThat(topology.devices()).allSatisfy(d -> assertThat(d.model()).isEqualTo(model));
        for (int i = 0; i < gpus; i++) {
            for (int j = 0; j < gpus; j++) {
                if (i != j) {
                    assertThat(topology.links().link(i, j).token()).isEqualTo(token);
                }
            }
        }
    }

    @Test
    void k80BoardsPairTheirTwoGpus() throws Exception {
        var profile = ProfileLoader.load("k80-4x");
        var links = profile.links();

        assertThat(profile.driverVersion()).startsWith("470.");
        assertThat(profile.cudaVersion()).isEqualTo("11.4");
        assertThat(profile.topology("n1").devices()).allSatisfy(d -> assertThat(d.family()).isEqualTo(GpuArchitecture.KEPLER));
        for (int i = 0; i < 8; i++) {
            for (int j = i + 1; j < 8; j++) {
                var expected = i / 2 == j / 2 ? PcieRelation.SAME_BOARD
                        : i / 4 == j / 4 ? PcieRelation.MULTIPLE_SWITCHES : PcieRelation.ACROSS_SOCKETS;
                assertThat(links.link(i, j)).as("G%d-G%d", i, j).isEqualTo(new GpuLink.Pcie(expected));
            }
        }
    }

    @Test
    void v100PcieBoxPairsBehindSwitchesWithoutNvlink() throws Exception {
        var topology = ProfileLoader.load("v100-pcie-8x").topology("n1");
        var links = topology.links();

        assertThat(topology.hasNvlink()).isFalse();
        assertThat(tokens(links, 0)).containsExactly("X", "PIX", "PHB", "PHB", "SYS", "SYS", "SYS", "SYS");
        assertThat(tokens(links, 6)).containsExactly("SYS", "SYS", "SYS", "SYS", "PHB", "PHB", "X", "PIX");
    }

    @Test
    void t4BoxMeetsWithinASocketAtTheNumaNode() throws Exception {
        var topology = ProfileLoader.load("t4-4x").topology("n1");

        assertThat(topology.hasNvlink()).isFalse();
        assertThat(tokens(topology.links(), 0)).containsExactly("X", "NODE", "SYS", "SYS");
        assertThat(topology.devices()).allSatisfy(d -> assertThat(d.memoryMiB()).isEqualTo(15360));
    }

    @Test
    void mixedNodeHasTwoNvlinkedA100sAndTwoT4s() throws Exception {
        var topology = ProfileLoader.load("mixed").topology("n1");

        assertThat(topology.devices()).extracting(GpuDevice::model).containsExactly("A100", "A100", "T4", "T4");
        assertThat(tokens(topology.links(), 0)).containsExactly("X", "NV12", "SYS", "SYS");
        assertThat(tokens(topology.links(), 2)).containsExactly("SYS", "SYS", "X", "NODE");
    }

    private static TreeMap<Integer, Integer> nvlinkPeers(LinkMatrix links, int gpu) {
        var peers = new TreeMap<Integer, Integer>();
        for (int other = 0; other < links.size(); other++) {
            if (other != gpu && links.link(gpu, other) instanceof GpuLink.Nvlink nvlink) {
                peers.put(other, nvlink.links());
            }
        }
        return peers;
    }

    private static Map.Entry<Integer, Integer> entry(int peer, int count) {
        return Map.entry(peer, count);
    }

    private static List<String> tokens(LinkMatrix links, int row) {
        var tokens = new ArrayList<String>();
        for (int j = 0; j < links.size(); j++) {
            tokens.add(row == j ? "X" : links.link(row, j).token());
        }
        return tokens;
    }
}
