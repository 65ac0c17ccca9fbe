package io.hetgpu.extender.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.hetgpu.extender.wire.ExtenderPreemptionArgs.MetaVictims;
import java.util.Map;

/** kube-scheduler's {@code ExtenderPreemptionResult}: the nodes kept as candidates, with the victims on each. */
public record ExtenderPreemptionResult(@JsonProperty("NodeNameToMetaVictims") Map<String, MetaVictims> nodeNameToMetaVictims) {
}
