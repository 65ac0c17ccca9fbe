package io.hetgpu.kubescheduler.dra;

/** A device as an allocation result names it: driver, pool and device name together are unique in a cluster. */
public record DeviceId(String driver, String pool, String device) {

    @Override
    public String toString() {
        return driver + "/" + pool + "/" + device;
    }
}
