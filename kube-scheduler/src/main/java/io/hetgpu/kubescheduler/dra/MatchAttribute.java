package io.hetgpu.kubescheduler.dra;

import java.util.List;

/**
 * A claim's {@code matchAttribute} constraint: every device allocated for the named requests (all requests when none are
 * named; a request's name covers its alternatives, {@code request/subrequest} one alternative) has the attribute, with
 * one value.
 *
 * @param attribute fully qualified ({@code gpu.nvidia.com/productName}, {@code resource.kubernetes.io/pcieRoot})
 */
public record MatchAttribute(List<String> requests, String attribute) {

    public MatchAttribute {
        requests = List.copyOf(requests);
    }
}
