package io.hetgpu.kubescheduler.dra;

import java.util.List;

/**
 * What one request (or one of a prioritized list's alternatives) asks for: devices of a class, further narrowed by
 * its own selectors, {@code count} of them or all.
 *
 * @param count the number asked for in {@link AllocationMode#EXACT_COUNT}; ignored for {@link AllocationMode#ALL}
 */
public record ExactRequest(String deviceClassName, List<String> selectors, AllocationMode mode, long count) {

    public ExactRequest {
        selectors = List.copyOf(selectors);
    }

    public static ExactRequest count(String deviceClassName, long count, String... selectors) {
        return new ExactRequest(deviceClassName, List.of(selectors), AllocationMode.EXACT_COUNT, count);
    }

    public static ExactRequest all(String deviceClassName, String... selectors) {
        return new ExactRequest(deviceClassName, List.of(selectors), AllocationMode.ALL, 0);
    }
}
