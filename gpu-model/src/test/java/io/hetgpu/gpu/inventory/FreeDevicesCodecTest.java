package io.hetgpu.gpu.inventory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FreeDevicesCodecTest {

    private final FreeDevicesCodec codec = new FreeDevicesCodec();

    @Test
    void roundTripsSortedAndStable() throws Exception {
        var free = new FreeDevices(Set.of("GPU-b", "GPU-a"), Instant.parse("2026-11-21T17:20:00Z"));

        var json = codec.encode(free);

        assertThat(json).isEqualTo("{\"devices\":[\"GPU-a\",\"GPU-b\"],\"readAt\":\"2026-11-21T17:20:00Z\"}");
        assertThat(codec.decode(json)).isEqualTo(free);
    }

    @Test
    void namesTheBadField() {
        assertThatThrownBy(() -> codec.decode("{\"devices\":[1],\"readAt\":\"2026-11-21T17:20:00Z\"}"))
                .hasMessage("devices[0]: expected a string, got 1");
        assertThatThrownBy(() -> codec.decode("{\"devices\":[],\"readAt\":\"yesterday\"}"))
                .hasMessageContaining("readAt: expected an RFC 3339 UTC time").hasMessageContaining("\"yesterday\"");
        assertThatThrownBy(() -> codec.decode("{\"readAt\":\"2026-11-21T17:20:00Z\"}"))
                .hasMessage("devices: missing");
    }

    @Test
    void deepDuplicatedOrOutOfRangeTextIsAFormatException() {
        assertThatThrownBy(() -> codec.decode("{\"devices\":" + "[".repeat(5_000) + "]".repeat(5_000) + "}"))
                .isInstanceOf(InventoryFormatException.class).hasMessage("gpu-free: nested deeper than 16 levels");
        assertThatThrownBy(() -> codec.decode("{\"devices\":[],\"devices\":[],\"readAt\":\"2026-11-21T17:20:00Z\"}"))
                .isInstanceOf(InventoryFormatException.class).hasMessageContaining("Duplicate field 'devices'");
        assertThatThrownBy(() -> codec.decode("{\"devices\":[],\"readAt\":\"2026-13-45T25:61:00Z\"}"))
                .isInstanceOf(InventoryFormatException.class).hasMessageStartingWith("readAt: ");
    }
}
