package io.hetgpu.deviceplugin.devices;

import java.util.ArrayList;
import java.util.List;

/**
 * Device IDs of a request that cannot be handed out.
 *
 * @param unknown   IDs that are not GPUs of this node
 * @param unhealthy IDs of GPUs that are currently unhealthy
 * @param repeated  IDs given more than once: one GPU handed to one container twice would count as two
 */
public record DeviceCheck(List<String> unknown, List<String> unhealthy, List<String> repeated) {

    public DeviceCheck {
        unknown = List.copyOf(unknown);
        unhealthy = List.copyOf(unhealthy);
        repeated = List.copyOf(repeated);
    }

    public boolean ok() {
        return unknown.isEmpty() && unhealthy.isEmpty() && repeated.isEmpty();
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
        if (!repeated.isEmpty()) {
            parts.add("device IDs given twice " + repeated);
        }
        return parts.isEmpty() ? "all devices can be allocated" : "cannot allocate " + String.join(" and ", parts);
    }
}
