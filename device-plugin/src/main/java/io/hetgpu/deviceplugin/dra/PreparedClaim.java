package io.hetgpu.deviceplugin.dra;

import java.util.List;

/** A claim this plugin prepared: what kubelet was told, kept so that a second prepare and an unprepare after a restart answer alike. */
public record PreparedClaim(ClaimRef claim, List<PreparedDevice> devices) {
    public PreparedClaim {
        devices = List.copyOf(devices);
    }
}
