package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Instant;
import java.util.List;

/**
 * The test cluster's API server as the scheduler driver's target: lists through the client, and writes decisions as
 * kube-scheduler writes them.
 *
 * <p>Binding sets the PodScheduled condition, then {@code spec.nodeName} with a merge patch, rather than through
 * the {@code pods/binding} subresource (which the in-process API server serves, {@code api.PodBinding}, for the
 * bind handshake): the condition's time is written to the nanosecond, where a real API server (metav1.Time) writes whole
 * seconds: with whole seconds, a pod bound in the same second as, but after, a node's {@code hetgpu.io/gpu-free} list was
 * read looks to the extender as if the list already accounted for it, and its GPUs look free until the device plugin
 * publishes again.
 */
public record ApiServerTarget(KubernetesClient client, String schedulerName) implements SchedulingTarget {

    @Override
    public List<Node> nodes() {
        return client.nodes().list().getItems();
    }

    @Override
    public List<Pod> pods() {
        return client.pods().inAnyNamespace().list().getItems();
    }

    @Override
    public List<PodDisruptionBudget> budgets() {
        return client.policy().v1().podDisruptionBudget().inAnyNamespace().list().getItems();
    }

    @Override
    public void write(Pod pod, Decision decision) {
        var ns = pod.getMetadata().getNamespace();
        var name = pod.getMetadata().getName();
        switch (decision) {
            case Decision.Bound bound when bound.byExtender() -> event(pod, "Normal", "Scheduled",
                    "Successfully assigned " + ns + "/" + name + " to " + bound.node());
            case Decision.Bound bound -> {
                // The binding subresource sets PodScheduled with the time of binding; the extender reads
                // it to tell pods bound after a node's free-device list was read. A real API server writes
                // it to the second; this one to the nanosecond (see the class comment).
                var now = Instant.now().toString();
                client.pods().inNamespace(ns).withName(name).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
                        "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\""
                                + now + "\"}]}}");
                client.pods().inNamespace(ns).withName(name)
                        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"nodeName\":\"" + bound.node() + "\"}}");
                event(pod, "Normal", "Scheduled", "Successfully assigned " + ns + "/" + name + " to " + bound.node());
            }
            case Decision.Unschedulable unschedulable -> event(pod, "Warning", "FailedScheduling", unschedulable.message());
            case Decision.Nominated nominated -> {
                for (var victim : nominated.victims()) {
                    var namespaceAndName = victim.split("/", 2);
                    var evicted = client.pods().inNamespace(namespaceAndName[0]).withName(namespaceAndName[1]);
                    var victimPod = evicted.get();
                    if (victimPod != null) {
                        event(victimPod, "Normal", "Preempted", "Preempted by pod " + pod.getMetadata().getUid() + " on node " + nominated.node());
                        evicted.delete();
                    }
                }
                client.pods().inNamespace(ns).withName(name).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
                        "{\"status\":{\"nominatedNodeName\":\"" + nominated.node() + "\"}}");
                event(pod, "Warning", "FailedScheduling", nominated.message() + " Preempting " + nominated.victims().size()
                        + " pod(s) on node " + nominated.node() + ".");
            }
            case Decision.Failed failed -> event(pod, "Warning", "FailedScheduling", failed.error());
        }
    }

    @Override
    public DraSnapshot dra() {
        return DraSnapshot.read(client);
    }

    @Override
    public void reserve(Pod pod, String node, DraFilter.Fits fits) {
        DraWrites.reserve(client, pod, node, fits);
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
                .withReportingComponent(schedulerName).withNewSource(schedulerName, null)
                .withFirstTimestamp(now).withLastTimestamp(now).withCount(1)
                .build()).create();
    }
}
