package io.hetgpu.extender.model;

/** Where another pod of the same job runs (or is bound). */
public record PeerLocation(String podName, String node, String rack, String zone) {
}
