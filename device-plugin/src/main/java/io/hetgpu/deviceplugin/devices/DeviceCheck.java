package io.hetgpu.deviceplugin.devices;

import java.util.ArrayList;
import java.util.List;

/**
 * Device IDs of a request that cannot be handed out.
 *
 * @param unknown   IDs that are not GPUs of this node
 * @param unhealthy IDs of GPUs that are currently unhealthy
 */
public record DeviceCheck(List<String> unknown, List<String> unhealthy) {

    public DeviceCheck {
        unknown = List.copyOf(unknown);
        unhealthy = List.copyOf(unhealthy);
    }

    public boolean ok() {
        return unknown.isEmpty() && unhealthy.isEmpty();
    }

    /** One sentence naming every refused ID, for the gRPC status kubelet logs and puts on the pod's events. */
    public String describe() {
        var parts = new ArrayList<String>();
        if (!unknown.isEmpty()) {
            parts.add("unknown device IDs " + unknown);
        }
        if (!unhealthy.isEmpty()) {
            parts.add("unhealthy device IDs " + unhealthy);
        }
        return parts.isEmpty() ? "all devices can be allocated" : "cannot allocate " + String.join(" and ", parts);
    }
}
