package io.hetgpu.kubescheduler.dra;

/**
 * One value of a device's {@code attributes} map in a ResourceSlice ({@code resource.k8s.io/v1} DeviceAttribute):
 * exactly one of a string, an int, a bool or a semantic version, as the driver published it.
 */
public sealed interface DeviceAttribute {

    record StringValue(String value) implements DeviceAttribute {
    }

    record IntValue(long value) implements DeviceAttribute {
    }

    record BoolValue(boolean value) implements DeviceAttribute {
    }

    /** A semantic version as published; parsed (and so checked) only when a selector reads it, as kube-scheduler does. */
    record VersionValue(String value) implements DeviceAttribute {
    }
}
