package io.hetgpu.kubescheduler.dra;

import java.util.List;

/** One entry of a claim's {@code spec.devices.requests}: either {@code exactly} or {@code firstAvailable}. */
public sealed interface DeviceRequest {

    String name();

    /** {@code exactly}: one way of satisfying the request. */
    record Exactly(String name, ExactRequest request) implements DeviceRequest {
    }

    /** {@code firstAvailable}: alternatives in order of preference, the first that can be allocated is. */
    record FirstAvailable(String name, List<SubRequest> subRequests) implements DeviceRequest {

        public FirstAvailable {
            subRequests = List.copyOf(subRequests);
        }
    }

    /** One alternative; its results are named {@code request/subrequest}. */
    record SubRequest(String name, ExactRequest request) {
    }
}
