package io.hetgpu.kubescheduler.dra;

import java.util.List;
import java.util.Optional;

/**
 * What kube-scheduler writes into a claim's {@code status.allocation}: a device per result, in allocation order, and
 * the node the devices tie the claim to (empty when every device is reachable from all nodes).
 */
public record ClaimAllocation(String namespace, String claimName, List<Result> results, Optional<String> nodeName) {

    public ClaimAllocation {
        results = List.copyOf(results);
    }

    /** One {@code devices.results} entry; {@code request} is {@code name} or {@code name/subrequest}. */
    public record Result(String request, String driver, String pool, String device) {

        public DeviceId id() {
            return new DeviceId(driver, pool, device);
        }
    }
}
