package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.http.HttpClient;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Objects;
import java.util.Random;

/**
 * The test cluster's kube-scheduler: takes the pending pods addressed to its scheduler name, highest
 * priority first (then oldest), runs each through a {@link SchedulingCycle} against the API server's
 * current nodes and pods, binds it or records a FailedScheduling event. One pod at a time, as
 * kube-scheduler does, so each decision sees the ones before it.
 *
 * <p>Binding sets {@code spec.nodeName} with a merge patch: the in-process API server has no
 * {@code pods/binding} subresource.
 */
public final class SchedulerDriver {

    private final KubernetesClient client;
    private final SchedulerSettings settings;
    private final SchedulingCycle cycle;

    public SchedulerDriver(KubernetesClient client, SchedulerSettings settings, HttpClient http, long seed) {
        this.client = client;
        this.settings = settings;
        this.cycle = new SchedulingCycle(settings.extenders().stream().map(e -> new ExtenderClient(e, http)).toList(), new Random(seed));
    }

    public SchedulerSettings settings() {
        return settings;
    }

    /** Tries every pending pod once; returns what became of each, in scheduling order. */
    public List<Decision> scheduleRound() {
        var nodes = client.nodes().list().getItems();
        var pods = client.pods().inAnyNamespace().list().getItems();
        var podsByNode = new HashMap<String, List<Pod>>();
        var pending = new ArrayList<Pod>();
        for (var pod : pods) {
            var nodeName = pod.getSpec().getNodeName();
            if (nodeName != null && !nodeName.isEmpty()) {
                if (!isFinished(pod)) {
                    podsByNode.computeIfAbsent(nodeName, n -> new ArrayList<>()).add(pod);
                }
            } else if (settings.schedulerName().equals(Objects.requireNonNullElse(pod.getSpec().getSchedulerName(), "default-scheduler"))
                    && !isFinished(pod)) {
                pending.add(pod);
            }
        }
        pending.sort(Comparator.comparing((Pod p) -> -Objects.requireNonNullElse(p.getSpec().getPriority(), 0))
                .thenComparing(p -> Objects.requireNonNullElse(p.getMetadata().getCreationTimestamp(), ""))
                .thenComparing(p -> p.getMetadata().getName()));
        var decisions = new ArrayList<Decision>();
        for (var pod : pending) {
            var decision = cycle.schedule(pod, nodes, podsByNode);
            record(pod, decision);
            if (decision instanceof Decision.Bound bound) {
                pod.getSpec().setNodeName(bound.node());
                podsByNode.computeIfAbsent(bound.node(), n -> new ArrayList<>()).add(pod);
            }
            decisions.add(decision);
        }
        return decisions;
    }

    private void record(Pod pod, Decision decision) {
        var ns = pod.getMetadata().getNamespace();
        var name = pod.getMetadata().getName();
        switch (decision) {
            case Decision.Bound bound -> {
                client.pods().inNamespace(ns).withName(name)
                        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"nodeName\":\"" + bound.node() + "\"}}");
                event(pod, "Normal", "Scheduled", "Successfully assigned " + ns + "/" + name + " to " + bound.node());
            }
            case Decision.Unschedulable unschedulable -> event(pod, "Warning", "FailedScheduling", unschedulable.message());
            case Decision.Failed failed -> event(pod, "Warning", "FailedScheduling", failed.error());
        }
    }

    private void event(Pod pod, String type, String reason, String message) {
        var now = Instant.now().toString();
        client.v1().events().inNamespace(pod.getMetadata().getNamespace()).resource(new EventBuilder()
                .withNewMetadata()
                .withName(pod.getMetadata().getName() + "." + Long.toHexString(System.nanoTime()))
                .withNamespace(pod.getMetadata().getNamespace())
                .endMetadata()
                .withInvolvedObject(new ObjectReferenceBuilder().withKind("Pod").withApiVersion("v1")
                        .withNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                        .withUid(pod.getMetadata().getUid()).build())
                .withType(type).withReason(reason).withMessage(message)
                .withReportingComponent(settings.schedulerName()).withNewSource(settings.schedulerName(), null)
                .withFirstTimestamp(now).withLastTimestamp(now).withCount(1)
                .build()).create();
    }

    private static boolean isFinished(Pod pod) {
        var phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }
}
