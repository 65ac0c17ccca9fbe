package io.hetgpu.extender.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;

/**
 * kube-scheduler's {@code ExtenderPreemptionArgs}: the pod to make room for and, per candidate node, the pods
 * kube-scheduler would evict; whole pods ({@code NodeNameToVictims}) or only their UIDs
 * ({@code NodeNameToMetaVictims}, when the extender is {@code nodeCacheCapable}).
 */
public record ExtenderPreemptionArgs(@JsonProperty("Pod") Pod pod,
                                     @JsonProperty("NodeNameToVictims") Map<String, Victims> nodeNameToVictims,
                                     @JsonProperty("NodeNameToMetaVictims") Map<String, MetaVictims> nodeNameToMetaVictims) {

    /** {@code Victims}: whole pods, and how many PodDisruptionBudgets evicting them violates. */
    public record Victims(@JsonProperty("Pods") List<Pod> pods, @JsonProperty("NumPDBViolations") long numPdbViolations) {
    }

    /** {@code MetaVictims}: the same by UID. */
    public record MetaVictims(@JsonProperty("Pods") List<MetaPod> pods, @JsonProperty("NumPDBViolations") long numPdbViolations) {
    }

    /** {@code MetaPod}. */
    public record MetaPod(@JsonProperty("UID") String uid) {
    }
}
