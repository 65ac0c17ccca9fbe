package io.hetgpu.kubescheduler.filter;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.kubescheduler.ResourceRequest;
import io.hetgpu.kubescheduler.SchedulingNode;
import io.hetgpu.kubescheduler.SchedulingNode.Taint;
import io.hetgpu.kubescheduler.SchedulingPod;
import io.hetgpu.kubescheduler.SchedulingPod.Toleration;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeFitTest {

    private static final Map<String, BigDecimal> ROOMY = Map.of("cpu", BigDecimal.valueOf(8), "memory", BigDecimal.valueOf(64L << 30),
            "pods", BigDecimal.valueOf(3), "nvidia.com/gpu", BigDecimal.valueOf(4));
    private static final SchedulingNode NODE = new SchedulingNode("gpu-1", false, Map.of("zone", "a"), List.of(), ROOMY);

    private static ResourceRequest gpus(int count) {
        return new ResourceRequest(Map.of("cpu", BigDecimal.ONE, "nvidia.com/gpu", BigDecimal.valueOf(count)));
    }

    private static SchedulingPod pod(ResourceRequest request) {
        return SchedulingPod.requesting(request);
    }

    @Test
    void aPodThatAsksForWhatIsFreeFits() {
        assertThat(NodeFit.check(pod(gpus(2)), NODE, List.of(gpus(2)))).isEmpty();
    }

    @Test
    void extendedResourcesCountWhatThePodsOnTheNodeHold() {
        assertThat(NodeFit.check(pod(gpus(3)), NODE, List.of(gpus(2)))).contains("Insufficient nvidia.com/gpu");
    }

    @Test
    void aResourceTheNodeDoesNotHaveIsInsufficient() {
        var wantsFpga = new ResourceRequest(Map.of("example.com/fpga", BigDecimal.ONE));
        assertThat(NodeFit.check(pod(wantsFpga), NODE, List.of())).contains("Insufficient example.com/fpga");
    }

    @Test
    void theNodesPodLimitCountsThePodBeingScheduled() {
        assertThat(NodeFit.check(pod(ResourceRequest.NONE), NODE, List.of(ResourceRequest.NONE, ResourceRequest.NONE, ResourceRequest.NONE)))
                .contains("Too many pods");
        assertThat(NodeFit.check(pod(ResourceRequest.NONE), NODE, List.of(ResourceRequest.NONE, ResourceRequest.NONE))).isEmpty();
    }

    @Test
    void anUnschedulableNodeIsRefusedBeforeAnythingElse() {
        var cordoned = new SchedulingNode("gpu-1", true, Map.of(), List.of(), Map.of());
        assertThat(NodeFit.check(pod(gpus(8)), cordoned, List.of())).contains("node(s) were unschedulable");
    }

    @Test
    void aPodThatNamesAnotherNodeDoesNotFit() {
        var pinned = new SchedulingPod("gpu-2", Map.of(), List.of(), ResourceRequest.NONE);
        assertThat(NodeFit.check(pinned, NODE, List.of())).contains("node(s) didn't match the requested node name");
        var here = new SchedulingPod("gpu-1", Map.of(), List.of(), ResourceRequest.NONE);
        assertThat(NodeFit.check(here, NODE, List.of())).isEmpty();
    }

    @Test
    void everySelectorLabelMustMatch() {
        var zoneB = new SchedulingPod("", Map.of("zone", "b"), List.of(), ResourceRequest.NONE);
        assertThat(NodeFit.check(zoneB, NODE, List.of())).contains("node(s) didn't match Pod's node affinity/selector");
        var zoneA = new SchedulingPod("", Map.of("zone", "a"), List.of(), ResourceRequest.NONE);
        assertThat(NodeFit.check(zoneA, NODE, List.of())).isEmpty();
    }

    @Test
    void aNoScheduleTaintKeepsOutPodsThatDoNotTolerateIt() {
        var tainted = new SchedulingNode("gpu-1", false, Map.of(), List.of(new Taint("nvidia.com/gpu", "present", "NoSchedule")), ROOMY);
        assertThat(NodeFit.check(pod(ResourceRequest.NONE), tainted, List.of()))
                .contains("node(s) had untolerated taint {nvidia.com/gpu: present}");

        var equal = new Toleration("nvidia.com/gpu", "Equal", "present", "NoSchedule");
        var exists = new Toleration("nvidia.com/gpu", "Exists", "", "");
        var everything = new Toleration("", "Exists", "", "");
        var otherValue = new Toleration("nvidia.com/gpu", "Equal", "absent", "");
        var otherEffect = new Toleration("nvidia.com/gpu", "Exists", "", "NoExecute");
        for (var toleration : List.of(equal, exists, everything)) {
            assertThat(NodeFit.check(new SchedulingPod("", Map.of(), List.of(toleration), ResourceRequest.NONE), tainted, List.of()))
                    .as("%s", toleration).isEmpty();
        }
        for (var toleration : List.of(otherValue, otherEffect)) {
            assertThat(NodeFit.check(new SchedulingPod("", Map.of(), List.of(toleration), ResourceRequest.NONE), tainted, List.of()))
                    .as("%s", toleration).isPresent();
        }
    }

    @Test
    void aPreferNoScheduleTaintOnlyScores() {
        var soft = new SchedulingNode("gpu-1", false, Map.of(), List.of(new Taint("old", "", "PreferNoSchedule")), ROOMY);
        assertThat(NodeFit.check(pod(ResourceRequest.NONE), soft, List.of())).isEmpty();
    }

    @Test
    void onlyAShortageOfResourcesIsSomethingEvictionsCouldFix() {
        assertThat(NodeFit.judge(pod(gpus(3)), NODE, List.of(gpus(2)))).hasValueSatisfying(r -> assertThat(r.unresolvable()).isFalse());
        var cordoned = new SchedulingNode("gpu-1", true, Map.of(), List.of(), ROOMY);
        assertThat(NodeFit.judge(pod(gpus(1)), cordoned, List.of())).hasValueSatisfying(r -> assertThat(r.unresolvable()).isTrue());
    }
}
