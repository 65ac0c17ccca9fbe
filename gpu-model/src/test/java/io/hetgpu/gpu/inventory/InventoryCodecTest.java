package io.hetgpu.gpu.inventory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.NodeTopology;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class InventoryCodecTest {

    private final InventoryCodec codec = new InventoryCodec();
    private final NodeTopology dgx1 = Fixtures.dgx1V100();

    @Test
    void roundTripsExactly() throws Exception {
        var unhealthy = dgx1.withHealth(Map.of(dgx1.device(3).uuid(), DeviceHealth.UNHEALTHY));

        var json = codec.encode(unhealthy);

        assertThat(codec.decode(json)).isEqualTo(unhealthy);
        assertThat(codec.encode(codec.decode(json))).isEqualTo(json);
    }

    @Test
    void writesTheDocumentedShape() {
        var json = codec.encode(dgx1);

        assertThat(json).startsWith("{\"schema\":1,\"driverVersion\":\"535.104.05\",\"cudaDriverVersion\":\"12.2\",\"devices\":[");
        assertThat(json).contains("\"model\":\"V100\",\"family\":\"volta\",\"computeCapability\":\"7.0\",\"memoryMiB\":16160");
        assertThat(json).contains("\"links\":[[\"X\",\"NV1\",\"NV1\",\"NV2\",\"NV2\",\"SYS\",\"SYS\",\"SYS\"]");
    }

    @Test
    void omitsAnUnknownNumaNodeAndReadsItBack() throws Exception {
        var device = dgx1.device(0);
        var noNuma = new GpuDevice(device.uuid(), 0, device.product(), device.model(), device.family(),
                device.computeCapability(), device.memoryMiB(), device.pciBusId(), GpuDevice.NUMA_UNKNOWN, device.health());
        var single = new NodeTopology("470.82.01", "11.4", java.util.List.of(noNuma),
                io.hetgpu.gpu.LinkMatrix.of(java.util.List.of(java.util.Arrays.asList((io.hetgpu.gpu.GpuLink) null))));

        var json = codec.encode(single);

        assertThat(json).doesNotContain("numaNode");
        assertThat(codec.decode(json).device(0).numaNode()).isEqualTo(GpuDevice.NUMA_UNKNOWN);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            memory as text          | "memoryMiB":16160              | "memoryMiB":"lots"          | devices[0].memoryMiB: expected an integer >= 1, got "lots"
            negative memory         | "memoryMiB":16160              | "memoryMiB":-1              | devices[0].memoryMiB: expected an integer >= 1, got -1
            missing uuid            | "uuid":"GPU-00000000-0000-0000-0000-000000000000", |     | devices[0].uuid: missing
            empty product           | "product":"Tesla V100-SXM2-16GB" | "product":""              | devices[0].product: expected a non-empty string, got ""
            bad family              | "family":"volta"               | "family":"vulcan"           | devices[0].family: unknown GPU family "vulcan"
            bad compute capability  | "computeCapability":"7.0"      | "computeCapability":"seven" | devices[0].computeCapability: not a compute capability
            bad health              | "health":"healthy"             | "health":"sick"             | devices[0].health: unknown health "sick"
            bad link token          | "NV1","NV1","NV2"              | "NV1","WIFI","NV2"          | links[0][2]: unknown PCIe relation "WIFI"
            asymmetric link         | "X","NV1","NV1","NV2"          | "X","NV1","NV1","NV1"       | links[0][3] is NV1 but links[3][0] is NV2
            bad diagonal            | ["X","NV1"                     | ["NV1","NV1"                | links[0][0]: the diagonal must be "X"
            wrong schema            | "schema":1                     | "schema":2                  | schema: this hetgpu reads schema 1, got 2
            missing driver          | "driverVersion":"535.104.05",  |                             | driverVersion: missing
            devices not an array    | "devices":[                    | "devices":"none","d":[      | devices: expected an array, got "none"
            duplicate index         | "index":1,                     | "index":0,                  | devices: devices must be ordered by index without repeats
            """)
    void rejectsMalformedFieldsNamingThem(String name, String from, String to, String message) {
        var json = codec.encode(dgx1).replaceFirst(java.util.regex.Pattern.quote(from), to == null ? "" : java.util.regex.Matcher.quoteReplacement(to));

        assertThatThrownBy(() -> codec.decode(json))
                .isInstanceOf(InventoryFormatException.class)
                .hasMessageContaining(message);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            ''               | gpu-inventory: empty annotation
            '{"schema":1'    | gpu-inventory: not JSON at line 1, column 12
            '[]'             | gpu-inventory: expected a JSON object, got []
            '{"schema":"1"}' | schema: expected an integer >= 1, got "1"
            """)
    void rejectsDocumentsThatAreNotInventories(String json, String message) {
        assertThatThrownBy(() -> codec.decode(json)).isInstanceOf(InventoryFormatException.class).hasMessageContaining(message);
    }

    @Test
    void rejectsARowOfTheWrongLength() {
        var json = codec.encode(dgx1).replaceFirst("\\[\"X\",\"NV1\",\"NV1\",\"NV2\",\"NV2\",\"SYS\",\"SYS\",\"SYS\"\\]", "[\"X\"]");

        assertThatThrownBy(() -> codec.decode(json)).hasMessage("links[0]: expected 8 entries, got 1");
    }

    @Test
    void refusesMoreThanSixtyFourDevicesNamingTheLimit() {
        var devices = new java.util.ArrayList<GpuDevice>();
        for (int i = 0; i < 65; i++) {
            devices.add(io.hetgpu.gpu.Fixtures.device(i, "Tesla T4", new io.hetgpu.gpu.ComputeCapability(7, 5), 15360));
        }
        var wide = new NodeTopology("535.104.05", "12.2", devices,
                io.hetgpu.gpu.LinkMatrix.builder(65, new io.hetgpu.gpu.GpuLink.Pcie(io.hetgpu.gpu.PcieRelation.ACROSS_SOCKETS)).build());

        assertThatThrownBy(() -> codec.decode(codec.encode(wide))).isInstanceOf(InventoryFormatException.class)
                .hasMessage("devices: 65 devices, but hetgpu handles at most 64 GPUs per node");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            nested past the limit   | gpu-inventory: nested deeper than 16 levels
            nested 100,000 deep     | gpu-inventory: nested deeper than 16 levels
            a 2,000-digit number    | gpu-inventory: Number value length (
            an index past int       | devices[0].index: expected an integer from 0 to 2147483647, got 4294967296
            a duplicate key         | gpu-inventory: not JSON at line 1, column
            a lone surrogate        | devices[0].family: unknown GPU family
            a float memory size     | devices[0].memoryMiB: expected an integer >= 1, got 1.0E300
            """)
    void anyTextIsAnInventoryOrAFormatExceptionNeverAnotherException(String name, String message) {
        var good = codec.encode(dgx1);
        var json = switch (name) {
            case "nested past the limit" -> "[".repeat(17) + "]".repeat(17);
            case "nested 100,000 deep" -> "{\"a\":".repeat(100_000) + "1" + "}".repeat(100_000);
            case "a 2,000-digit number" -> good.replaceFirst("\"memoryMiB\":16160", "\"memoryMiB\":" + "9".repeat(2_000));
            case "an index past int" -> good.replaceFirst("\"index\":0,", "\"index\":4294967296,");
            case "a duplicate key" -> good.replaceFirst("\"schema\":1,", "\"schema\":1,\"schema\":1,");
            case "a lone surrogate" -> good.replaceFirst("\"family\":\"volta\"", "\"family\":\"\\\\ud800\"");
            case "a float memory size" -> good.replaceFirst("\"memoryMiB\":16160", "\"memoryMiB\":1e300");
            default -> throw new IllegalArgumentException(name);
        };

        assertThatThrownBy(() -> codec.decode(json)).isInstanceOf(InventoryFormatException.class).hasMessageStartingWith(message);
    }
}
