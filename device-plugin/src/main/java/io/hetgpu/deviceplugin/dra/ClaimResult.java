package io.hetgpu.deviceplugin.dra;

import java.util.List;

/** What preparing one claim came to: its devices, or the reason kubelet is given in the claim's own entry. */
public sealed interface ClaimResult {

    record Prepared(List<PreparedDevice> devices) implements ClaimResult {
        public Prepared {
            devices = List.copyOf(devices);
        }
    }

    record Failed(String reason) implements ClaimResult { }
}
