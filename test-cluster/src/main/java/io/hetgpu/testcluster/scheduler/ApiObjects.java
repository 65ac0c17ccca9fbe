package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.kubescheduler.ResourceRequest;
import io.hetgpu.kubescheduler.SchedulingNode;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.hetgpu.kubescheduler.SchedulingPod;
import io.hetgpu.kubescheduler.preemption.DisruptionBudget;
import io.hetgpu.kubescheduler.preemption.Preemptor;
import io.hetgpu.kubescheduler.preemption.RunningPod;
import java.time.Instant;
import java.util.Set;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/** The API server's Pods and Nodes as the kube-scheduler model reads them; absent fields become empty ones. */
public final class ApiObjects {

    private ApiObjects() {
    }

    public static SchedulingPod pod(Pod pod) {
        var spec = pod.getSpec();
        return new SchedulingPod(Objects.requireNonNullElse(spec.getNodeName(), ""),
                Objects.requireNonNullElse(spec.getNodeSelector(), Map.of()),
                Objects.requireNonNullElse(spec.getTolerations(), List.<io.fabric8.kubernetes.api.model.Toleration>of()).stream()
                        .map(t -> new SchedulingPod.Toleration(text(t.getKey()), text(t.getOperator()), text(t.getValue()), text(t.getEffect())))
                        .toList(),
                request(pod));
    }

    public static SchedulingNode node(Node node) {
        var spec = node.getSpec();
        var taints = spec == null || spec.getTaints() == null ? List.<SchedulingNode.Taint>of() : spec.getTaints().stream()
                .map(t -> new SchedulingNode.Taint(text(t.getKey()), text(t.getValue()), text(t.getEffect()))).toList();
        var allocatable = node.getStatus() == null || node.getStatus().getAllocatable() == null
                ? Map.<String, Quantity>of() : node.getStatus().getAllocatable();
        return new SchedulingNode(node.getMetadata().getName(), spec != null && Boolean.TRUE.equals(spec.getUnschedulable()),
                Objects.requireNonNullElse(node.getMetadata().getLabels(), Map.of()), taints, amounts(allocatable));
    }

    public static ResourceRequest request(Pod pod) {
        return ResourceRequest.of(containers(pod.getSpec().getContainers()), containers(pod.getSpec().getInitContainers()));
    }

    /** The pod as kube-scheduler's preemption weighs it when it is the one that found no node. */
    public static Preemptor preemptor(Pod pod) {
        var status = pod.getStatus();
        return new Preemptor(text(pod.getMetadata().getUid()), pod(pod), priority(pod), "Never".equals(pod.getSpec().getPreemptionPolicy()),
                status == null ? "" : text(status.getNominatedNodeName()));
    }

    /** A bound pod as a possible victim; one not started yet counts from its creation (both as the API server writes them). */
    public static RunningPod running(Pod pod) {
        var status = pod.getStatus();
        var started = status != null && status.getStartTime() != null ? Instant.parse(status.getStartTime())
                : pod.getMetadata().getCreationTimestamp() != null ? Instant.parse(pod.getMetadata().getCreationTimestamp()) : Instant.EPOCH;
        return new RunningPod(text(pod.getMetadata().getUid()), text(pod.getMetadata().getNamespace()),
                Objects.requireNonNullElse(pod.getMetadata().getLabels(), Map.of()), priority(pod), started, request(pod),
                pod.getMetadata().getDeletionTimestamp() != null);
    }

    public static DisruptionBudget budget(PodDisruptionBudget budget) {
        var selector = budget.getSpec() == null || budget.getSpec().getSelector() == null ? null : budget.getSpec().getSelector().getMatchLabels();
        var status = budget.getStatus();
        return new DisruptionBudget(text(budget.getMetadata().getNamespace()), Objects.requireNonNullElse(selector, Map.of()),
                status == null || status.getDisruptionsAllowed() == null ? 0 : status.getDisruptionsAllowed(),
                status == null || status.getDisruptedPods() == null ? Set.of() : status.getDisruptedPods().keySet());
    }

    private static int priority(Pod pod) {
        return Objects.requireNonNullElse(pod.getSpec().getPriority(), 0);
    }

    public static List<ResourceRequest> requests(List<Pod> pods) {
        return pods.stream().map(ApiObjects::request).toList();
    }

    private static List<ResourceRequest.Container> containers(List<Container> containers) {
        if (containers == null) {
            return List.of();
        }
        return containers.stream().map(Container::getResources).filter(Objects::nonNull)
                .map(r -> new ResourceRequest.Container(amounts(r.getRequests()), amounts(r.getLimits()))).toList();
    }

    private static Map<String, BigDecimal> amounts(Map<String, Quantity> quantities) {
        return quantities == null ? Map.of() : quantities.entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().getNumericalAmount()));
    }

    private static String text(String value) {
        return Objects.requireNonNullElse(value, "");
    }
}
