package io.hetgpu.extender.wire;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;

/**
 * kube-scheduler's {@code ExtenderArgs} ({@code k8s.io/kube-scheduler/extender/v1}). Any field may be
 * null: kube-scheduler sends {@code Nodes} for {@code nodeCacheCapable: false} and {@code NodeNames} for true.
 */
public record ExtenderArgs(Pod pod, List<WireNode> nodes, List<String> nodeNames) {
}
