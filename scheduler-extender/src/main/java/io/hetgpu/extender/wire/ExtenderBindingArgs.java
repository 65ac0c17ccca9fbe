package io.hetgpu.extender.wire;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * kube-scheduler's {@code ExtenderBindingArgs}: the pod it chose a node for and that node, sent to the bind verb. Go's
 * struct has no JSON tags, so the keys are the field names.
 *
 * @param podUid the pod's UID ({@code PodUID}): the Binding carries it, so a pod deleted and created again under the
 *               same name is not bound in its place
 */
public record ExtenderBindingArgs(@JsonProperty("PodName") String podName, @JsonProperty("PodNamespace") String podNamespace,
                                  @JsonProperty("PodUID") String podUid, @JsonProperty("Node") String node) {
}
