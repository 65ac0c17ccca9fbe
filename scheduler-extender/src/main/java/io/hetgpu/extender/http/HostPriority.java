package io.hetgpu.extender.http;

/** kube-scheduler's {@code HostPriority}: a node and its score, 0..10. */
public record HostPriority(String host, int score) {
}
