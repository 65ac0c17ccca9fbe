package io.hetgpu.gpu.profile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.PcieRelation;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The profile format as an admin writes it, and every way it can be wrong. */
class ProfileFormatTest {

    /** A small valid profile; the malformed cases each change one line of it. */
    private static final String VALID = """
            name: lab-box
            description: two RTX cards in a workstation
            driverVersion: "550.54.14"
            cudaVersion: 12.4
            gpu:
              product: NVIDIA RTX A6000
              memoryMiB: 49140
              computeCapability: 8.6
            devices:
              - {pciBusId: "0000:01:00.0", numaNode: 0}
              - {pciBusId: "0000:02:00.0"}
            links:
              pcie:
                - socket:
                    - switch: [0, 1]
            """;

    @Test
    void readsAHandWrittenProfileWithUnquotedVersions() throws Exception {
        var profile = ProfileLoader.parse("lab.yaml", VALID);

        assertThat(profile.cudaVersion()).isEqualTo("12.4");
        assertThat(profile.devices().get(0).computeCapability().toString()).isEqualTo("8.6");
        assertThat(profile.devices().get(1).numaNode()).isEqualTo(GpuDevice.NUMA_UNKNOWN);
        assertThat(profile.links().link(0, 1)).isEqualTo(new GpuLink.Pcie(PcieRelation.SINGLE_SWITCH));
        assertThat(profile.topology("ws1").device(0).model()).isEqualTo("RTX-A6000");
    }

    @Test
    void readsJsonToo(@TempDir Path dir) throws Exception {
        var file = dir.resolve("box.json");
        Files.writeString(file, """
                {"name": "box", "driverVersion": "535.183.01", "cudaVersion": "12.2",
                 "devices": [{"pciBusId": "0000:3B:00.0", "numaNode": 0, "product": "Tesla T4", "memoryMiB": 15360, "computeCapability": "7.5"},
                             {"pciBusId": "0000:AF:00.0", "numaNode": 1, "product": "Tesla T4", "memoryMiB": 15360, "computeCapability": "7.5"}],
                 "links": {"topo": "GPU0 GPU1\\nGPU0 X SYS\\nGPU1 SYS X"}}
                """);

        var profile = ProfileLoader.load(file.toString());

        assertThat(profile.name()).isEqualTo("box");
        assertThat(profile.links().link(0, 1).token()).isEqualTo("SYS");
    }

    @Test
    void readsNvidiaSmiOutputWithNicsAffinityAndColour() throws Exception {
        // As a recent driver prints it: underlined header, a NIC column and row, affinity columns, legend.
        var topo = "\t\u001B[4mGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\u001B[0m\n"
                + "GPU0\t X \tNV12\tPXB\t0-31\t0\t\tN/A\n"
                + "GPU1\tNV12\t X \tSYS\t32-63\t1\t\tN/A\n"
                + "NIC0\tPXB\tSYS\t X \t\t\t\t\n\n"
                + "Legend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect\n"
                + "NIC Legend:\n\n  NIC0: mlx5_0\n";
        var profile = ProfileLoader.parse("pasted.yaml", VALID.replace("""
                  pcie:
                    - socket:
                        - switch: [0, 1]
                """, "  topo: " + quoted(topo) + "\n"));

        assertThat(profile.links().link(0, 1)).isEqualTo(new GpuLink.Nvlink(12, false));
    }

    @Test
    void nvswitchFabricIsAllToAll() throws Exception {
        var profile = ProfileLoader.parse("fabric.yaml", VALID.replace("""
                  pcie:
                    - socket:
                        - switch: [0, 1]
                """, "  nvswitch: {links: 18}\n"));

        assertThat(profile.links().link(1, 0)).isEqualTo(new GpuLink.Nvlink(18, true));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            memory not a number      | 'memoryMiB: 49140'                 | 'memoryMiB: lots'                   | lab.yaml: gpu.memoryMiB: expected an integer >= 1, got "lots"
            memory zero              | 'memoryMiB: 49140'                 | 'memoryMiB: 0'                      | lab.yaml: gpu.memoryMiB: expected an integer >= 1, got 0
            device memory            | '{pciBusId: "0000:02:00.0"}'       | '{pciBusId: "0000:02:00.0", memoryMiB: -5}' | lab.yaml: devices[1].memoryMiB: expected an integer >= 1, got -5
            compute capability       | 'computeCapability: 8.6'           | 'computeCapability: eight'          | lab.yaml: gpu.computeCapability: expected MAJOR.MINOR such as "8.0", got "eight"
            bus id                   | '"0000:02:00.0"}'                  | '"pci-2"}'                          | lab.yaml: devices[1].pciBusId: expected a PCI bus ID such as "0000:07:00.0", got "pci-2"
            duplicate bus id         | '"0000:02:00.0"}'                  | '"0000:01:00.0"}'                   | lab.yaml: devices[1].pciBusId: "0000:01:00.0" is already the bus ID of devices[0]
            numa node                | 'numaNode: 0}'                     | 'numaNode: first}'                  | lab.yaml: devices[0].numaNode: expected an integer from 0 to 1023, got "first"
            misspelt field           | 'numaNode: 0}'                     | 'numa: 0}'                          | lab.yaml: devices[0].numa: unknown field (expected one of computeCapability, memoryMiB, numaNode, pciBusId, product)
            unknown gpu field        | 'product: NVIDIA RTX A6000'        | 'vendor: NVIDIA'                    | lab.yaml: gpu.vendor: unknown field
            missing product          | '  product: NVIDIA RTX A6000'      | ''                                  | lab.yaml: devices[0].product: missing
            unknown top-level field  | 'name: lab-box'                    | 'title: lab-box'                    | lab.yaml: title: unknown field
            missing cuda version     | 'cudaVersion: 12.4'                | ''                                  | lab.yaml: cudaVersion: missing
            bad name                 | 'name: lab-box'                    | 'name: Lab Box'                     | lab.yaml: name: expected lower-case letters, digits, '.' and '-', got "Lab Box"
            broken indentation       | '  - {pciBusId: "0000:01:00.0", numaNode: 0}' | '  extra: 1'             | lab.yaml: line
            GPU out of range         | 'switch: [0, 1]'                   | 'switch: [0, 2]'                    | lab.yaml: links.pcie[0].socket[0].switch[1]: expected an integer from 0 to 1, got 2
            GPU placed twice         | 'switch: [0, 1]'                   | 'switch: [0, 0]'                    | lab.yaml: links.pcie[0].socket[0].switch[1]: GPU 0 is placed twice in the tree
            GPU not placed           | 'switch: [0, 1]'                   | 'switch: [0]'                       | lab.yaml: links.pcie: GPU 1 is not placed anywhere in the tree
            unknown tree element     | '- switch: [0, 1]'                 | '- bridge: [0, 1]'                  | lab.yaml: links.pcie[0].socket[0].bridge: unknown element (expected socket, hostBridge, switch or board)
            socket in a switch       | '- switch: [0, 1]'                 | '- switch: [{socket: [0, 1]}]'      | lab.yaml: links.pcie[0].socket[0].switch[0].socket: a socket cannot sit inside a switch
            tree without socket      | '- socket:'                        | '- hostBridge:'                     | lab.yaml: links.pcie[0].hostBridge: expected a socket at the top of the tree
            no links kind            | '  pcie:'                          | '  wires:'                          | lab.yaml: links.wires: unknown field (expected one of nvlink, pcie)
            """)
    void malformedProfileNamesFileFieldAndValue(String what, String line, String replacement, String expected) {
        assertThat(VALID).contains(line);
        var broken = VALID.replace(line, replacement);

        assertThatThrownBy(() -> ProfileLoader.parse("lab.yaml", broken))
                .isInstanceOf(ProfileFormatException.class)
                .hasMessageStartingWith(expected);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            wrong size        | 'GPU0 GPU1 GPU2\\nGPU0 X SYS SYS\\nGPU1 SYS X SYS\\nGPU2 SYS SYS X' | lab.yaml: links.topo: the table has 3 GPUs but devices lists 2
            unknown token     | 'GPU0 GPU1\\nGPU0 X NVX\\nGPU1 NVX X'                               | lab.yaml: links.topo: row GPU0, column GPU1: unknown link "NVX" (expected NV#, NVS#, BRD, PIX, PXB, PHB, NODE or SYS)
            asymmetric        | 'GPU0 GPU1\\nGPU0 X NV2\\nGPU1 NV1 X'                               | lab.yaml: links.topo: GPU0->GPU1 is NV2 but GPU1->GPU0 is NV1
            missing row       | 'GPU0 GPU1\\nGPU0 X NV2'                                            | lab.yaml: links.topo: the header names 2 GPUs but the table has only 1 GPU rows
            short row         | 'GPU0 GPU1\\nGPU0 X\\nGPU1 NV1 X'                                   | lab.yaml: links.topo: row GPU0 has 1 entries, expected 2
            diagonal          | 'GPU0 GPU1\\nGPU0 SYS SYS\\nGPU1 SYS X'                             | lab.yaml: links.topo: row GPU0, column GPU0: expected X (a GPU to itself), got "SYS"
            no header         | 'hello'                                                            | lab.yaml: links.topo: expected the output of `nvidia-smi topo -m`
            """)
    void malformedTopoTableNamesCellAndToken(String what, String table, String expected) {
        var broken = VALID.replace("""
                  pcie:
                    - socket:
                        - switch: [0, 1]
                """, "  topo: \"" + table + "\"\n");

        assertThatThrownBy(() -> ProfileLoader.parse("lab.yaml", broken))
                .isInstanceOf(ProfileFormatException.class)
                .hasMessageStartingWith(expected);
    }

    @Test
    void nvlinkPairsAreChecked() {
        var withPairs = VALID.replace("  pcie:", "  nvlink:\n    - {gpus: [0, 1], links: 2}\n    - {gpus: [1, 0], links: 1}\n  pcie:");

        assertThatThrownBy(() -> ProfileLoader.parse("lab.yaml", withPairs))
                .hasMessage("lab.yaml: links.nvlink[1].gpus: the pair 1-0 is already given at links.nvlink[0]");
        assertThatThrownBy(() -> ProfileLoader.parse("lab.yaml", withPairs.replace("[1, 0], links: 1", "[1, 1], links: 1")))
                .hasMessage("lab.yaml: links.nvlink[1].gpus: a GPU has no NVLink to itself, got [1, 1]");
        assertThatThrownBy(() -> ProfileLoader.parse("lab.yaml", withPairs.replace("    - {gpus: [1, 0], links: 1}\n", "").replace("links: 2", "links: none")))
                .hasMessage("lab.yaml: links.nvlink[0].links: expected an integer from 1 to 64, got \"none\"");
    }

    @Test
    void brokenSyntaxAndDuplicateKeysNameTheLine() {
        assertThatThrownBy(() -> ProfileLoader.parse("lab.yaml", VALID.replace("name: lab-box", "name: [lab-box")))
                .isInstanceOf(ProfileFormatException.class)
                .hasMessageStartingWith("lab.yaml: line ")
                .hasMessageContaining("not valid YAML");
        assertThatThrownBy(() -> ProfileLoader.parse("lab.yaml", VALID + "name: other\n"))
                .hasMessageStartingWith("lab.yaml: line ")
                .hasMessageContaining("Duplicate field 'name'");
        assertThatThrownBy(() -> ProfileLoader.parse("lab.yaml", ""))
                .hasMessageStartingWith("lab.yaml: expected a mapping of fields");
        assertThatThrownBy(() -> ProfileLoader.parse("box.json", "{\"name\": "))
                .hasMessageStartingWith("box.json: line 1")
                .hasMessageContaining("not valid JSON");
    }

    @Test
    void unknownProfileSaysWhatIsShipped() {
        assertThatThrownBy(() -> SimulatedGpuSource.open("dgx-9000", "n1"))
                .isInstanceOf(GpuDiscoveryException.class)
                .hasMessage("dgx-9000: no such profile: not a shipped one (dgx1-p100, dgx1-v100, dgx-a100, dgx-h100, "
                        + "dgx2-v100, v100-pcie-8x, t4-4x, k80-4x, mixed) and no such file");
    }

    @Test
    void errorsOfAFileNameThePath(@TempDir Path dir) throws Exception {
        var file = dir.resolve("lab.yaml");
        Files.writeString(file, VALID.replace("memoryMiB: 49140", "memoryMiB: lots"));

        assertThatThrownBy(() -> SimulatedGpuSource.open(file.toString(), "n1"))
                .isInstanceOf(GpuDiscoveryException.class)
                .hasMessage(file + ": gpu.memoryMiB: expected an integer >= 1, got \"lots\"");
    }

    private static String quoted(String text) {
        return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n").replace("\t", "\\t")
                .replace("\u001B", "\\e") + "\"";
    }
}
