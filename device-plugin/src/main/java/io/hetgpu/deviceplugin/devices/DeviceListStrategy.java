package io.hetgpu.deviceplugin.devices;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * How a container learns which GPUs it got; the names and meanings are those of NVIDIA's device plugin
 * ({@code --device-list-strategy}), so a node set up for it works unchanged.
 */
public enum DeviceListStrategy {
    /** {@code NVIDIA_VISIBLE_DEVICES=<uuid,...>}, read by the NVIDIA container runtime hook. */
    ENVVAR("envvar"),
    /**
     * CDI device names {@code nvidia.com/gpu=<uuid>} in the CRI request. Needs a CDI spec with UUID
     * names on the node ({@code nvidia-ctk cdi generate --device-name-strategy=uuid}); without it the
     * runtime refuses to create the container, which is why this is not the default.
     */
    CDI_CRI("cdi-cri");

    private final String flag;

    DeviceListStrategy(String flag) {
        this.flag = flag;
    }

    public String flag() {
        return flag;
    }

    public static DeviceListStrategy parse(String text) {
        for (var strategy : values()) {
            if (strategy.flag.equals(text.strip())) {
                return strategy;
            }
        }
        throw new IllegalArgumentException("unknown device list strategy \"" + text + "\"; expected one of "
                + Arrays.stream(values()).map(DeviceListStrategy::flag).collect(Collectors.joining(", ")));
    }
}
