package io.hetgpu.gpu.inventory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class DeviceAssignmentCodecTest {

    private final DeviceAssignmentCodec codec = new DeviceAssignmentCodec();

    @Test
    void roundTripsKeepingTheDeviceOrder() throws Exception {
        var assignment = new DeviceAssignment("dgx-a100-1", List.of("GPU-b", "GPU-a"), Instant.parse("2026-11-22T14:05:00.123456Z"));

        var json = codec.encode(assignment);

        assertThat(json).isEqualTo("{\"node\":\"dgx-a100-1\",\"devices\":[\"GPU-b\",\"GPU-a\"],\"boundAt\":\"2026-11-22T14:05:00.123456Z\"}");
        assertThat(codec.decode(json)).isEqualTo(assignment);
    }

    @Test
    void carriesTheSignatureWhenThereIsOne() throws Exception {
        var signed = new DeviceAssignment("n", List.of("GPU-a"), Instant.parse("2026-11-22T14:05:00Z")).signed("c2ln");

        var json = codec.encode(signed);

        assertThat(json).isEqualTo("{\"node\":\"n\",\"devices\":[\"GPU-a\"],\"boundAt\":\"2026-11-22T14:05:00Z\",\"sig\":\"c2ln\"}");
        assertThat(codec.decode(json)).isEqualTo(signed);
        assertThat(codec.decode("{\"node\":\"n\",\"devices\":[\"GPU-a\"],\"boundAt\":\"2026-11-22T14:05:00Z\"}").signature())
                .as("a record without one, as every reader of records accepts").isEmpty();
        assertThatThrownBy(() -> codec.decode("{\"node\":\"n\",\"devices\":[],\"boundAt\":\"2026-11-22T14:05:00Z\",\"sig\":7}"))
                .hasMessage("sig: expected a string, got 7");
    }

    @Test
    void namesTheBadField() {
        assertThatThrownBy(() -> codec.decode("{\"node\":\"\",\"devices\":[],\"boundAt\":\"2026-11-22T14:05:00Z\"}"))
                .hasMessage("node: expected a non-empty string, got \"\"");
        assertThatThrownBy(() -> codec.decode("{\"node\":\"n\",\"devices\":[\"GPU-a\",\"GPU-a\"],\"boundAt\":\"2026-11-22T14:05:00Z\"}"))
                .hasMessage("devices[1]: device \"GPU-a\" listed twice");
        assertThatThrownBy(() -> codec.decode("{\"node\":\"n\",\"devices\":[\" \"],\"boundAt\":\"2026-11-22T14:05:00Z\"}"))
                .hasMessage("devices[0]: expected a device ID, got \"\"");
        assertThatThrownBy(() -> codec.decode("{\"node\":\"n\",\"devices\":[],\"boundAt\":\"soon\"}"))
                .hasMessageContaining("boundAt: expected an RFC 3339 UTC time").hasMessageContaining("\"soon\"");
        assertThatThrownBy(() -> codec.decode("{\"node\":\"n\",\"boundAt\":\"2026-11-22T14:05:00Z\"}"))
                .hasMessage("devices: missing");
        assertThatThrownBy(() -> codec.decode("not json")).isInstanceOf(InventoryFormatException.class);
    }
}
