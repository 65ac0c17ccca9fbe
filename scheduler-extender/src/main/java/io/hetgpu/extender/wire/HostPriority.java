package io.hetgpu.extender.wire;

/** kube-scheduler's {@code HostPriority}: a node and its score, 0..10. */
public record HostPriority(String host, int score) {
}
