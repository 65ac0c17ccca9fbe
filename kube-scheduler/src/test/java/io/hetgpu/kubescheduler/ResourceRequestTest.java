package io.hetgpu.kubescheduler;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.kubescheduler.ResourceRequest.Container;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResourceRequestTest {

    private static Map<String, BigDecimal> amounts(String resource, long amount) {
        return Map.of(resource, BigDecimal.valueOf(amount));
    }

    @Test
    void containersAddUp() {
        var request = ResourceRequest.of(List.of(new Container(amounts("cpu", 2), Map.of()), new Container(amounts("cpu", 3), Map.of())), List.of());
        assertThat(request.get("cpu")).isEqualByComparingTo("5");
    }

    @Test
    void aLimitAloneCountsAsTheRequestAndARequestWinsOverItsLimit() {
        var gpuByLimit = new Container(Map.of(), amounts("nvidia.com/gpu", 2));
        var cpuBoth = new Container(amounts("cpu", 1), amounts("cpu", 4));
        var request = ResourceRequest.of(List.of(gpuByLimit, cpuBoth), List.of());
        assertThat(request.get("nvidia.com/gpu")).isEqualByComparingTo("2");
        assertThat(request.get("cpu")).isEqualByComparingTo("1");
        assertThat(request.requests("memory")).isFalse();
    }

    @Test
    void theLargestInitContainerCountsWhenItIsMoreThanTheContainers() {
        var containers = List.of(new Container(amounts("cpu", 1), Map.of()), new Container(amounts("cpu", 1), Map.of()));
        var bigInit = new Container(amounts("cpu", 6), Map.of());
        var smallInit = new Container(amounts("cpu", 1), Map.of());
        assertThat(ResourceRequest.of(containers, List.of(smallInit, bigInit)).get("cpu")).isEqualByComparingTo("6");
        assertThat(ResourceRequest.of(containers, List.of(smallInit)).get("cpu")).isEqualByComparingTo("2");
    }
}
