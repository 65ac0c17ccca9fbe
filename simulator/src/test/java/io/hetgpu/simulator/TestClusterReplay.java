package io.hetgpu.simulator;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.gpu.inventory.FreeDevicesCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.kubelet.SimulatedKubelet;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Replays a {@link PlacementScript}'s steps on a running test cluster: the same pods (GPUs as
 * {@code nvidia.com/gpu} limits, cpu and memory requests, {@code spec.priority}, job and role labels, card
 * annotations, a claim whose {@code hetgpu.io/data-locality} names the data's rack) created and deleted
 * in the same order, each step's pending pods scheduled by the test cluster's scheduler over HTTP.
 *
 * <p>Between decisions it waits until the cluster has caught up, so that every decision sees the ones
 * before it as the simulator does: a bound pod admitted by its kubelet (devices allocated through the
 * device plugin), and every node's published free-device list consistent with its pods, i.e. listing
 * exactly the devices not held by a pod bound before the list was read (the extender predicts the
 * devices of pods bound after). Without that wait a decision would depend on when the plugin last
 * published, which the simulator does not model.
 */
final class TestClusterReplay {

    static final String NAMESPACE = "sim";
    private static final String GPU = HetgpuKeys.DEFAULT_RESOURCE_NAME;
    private static final Duration CATCH_UP = Duration.ofSeconds(10);

    private final TestCluster cluster;
    private final KubernetesClient client;
    private final String schedulerName;
    private final FreeDevicesCodec freeCodec = new FreeDevicesCodec();

    TestClusterReplay(TestCluster cluster, String schedulerName, List<String> racks) {
        this.cluster = cluster;
        this.client = cluster.client();
        this.schedulerName = schedulerName;
        // Claims exist before the extender starts, so its informer has them from its first list.
        for (var rack : racks) {
            client.persistentVolumeClaims().inNamespace(NAMESPACE).resource(new PersistentVolumeClaimBuilder()
                    .withNewMetadata().withName(claim(rack)).withNamespace(NAMESPACE)
                    .addToAnnotations(HetgpuKeys.DATA_LOCALITY, "rack=" + rack).endMetadata()
                    .withNewSpec().withAccessModes("ReadOnlyMany").withNewResources().addToRequests("storage", new Quantity("1Ti"))
                    .endResources().endSpec().build()).create();
        }
    }

    private static String claim(String rack) {
        return "data-" + rack;
    }

    List<PlacementScript.Outcome> replay(List<PlacementScript.Step> steps, SchedulerDriver driver) {
        var outcomes = new ArrayList<PlacementScript.Outcome>();
        for (int s = 0; s < steps.size(); s++) {
            var step = steps.get(s);
            step.deletions().forEach(name -> client.pods().inNamespace(NAMESPACE).withName(name).delete());
            if (!step.deletions().isEmpty()) {
                await().atMost(CATCH_UP).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10)).until(this::caughtUp);
            }
            step.creations().forEach(pod -> client.resource(pod(pod)).create());
            int stepIndex = s;
            driver.scheduleRound(decision -> outcomes.add(outcome(stepIndex, decision)));
        }
        return outcomes;
    }

    private PlacementScript.Outcome outcome(int step, Decision decision) {
        var name = decision.pod().substring(decision.pod().indexOf('/') + 1);
        if (!(decision instanceof Decision.Bound bound)) {
            return new PlacementScript.Outcome(step, name, "", List.of());
        }
        await().atMost(CATCH_UP).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(2)).until(this::caughtUp);
        var annotations = client.pods().inNamespace(NAMESPACE).withName(name).get().getMetadata().getAnnotations();
        var devices = annotations.get(SimulatedKubelet.DEVICES_ANNOTATION);
        return new PlacementScript.Outcome(step, name, bound.node(),
                devices.isEmpty() ? List.of() : List.of(devices.split(",")).stream().sorted().toList());
    }

    /** Every bound pod admitted and running, every GPU node's free list consistent with its pods. */
    private boolean caughtUp() throws InventoryFormatException {
        var pods = client.pods().inNamespace(NAMESPACE).list().getItems();
        for (var pod : pods) {
            // Running is the kubelet's last write for a pod: deleting it earlier would race that write.
            if (pod.getSpec().getNodeName() != null && (devices(pod) == null || !"Running".equals(pod.getStatus().getPhase()))) {
                return false;
            }
        }
        for (var node : client.nodes().list().getItems()) {
            var name = node.getMetadata().getName();
            if (cluster.nodes().stream().noneMatch(spec -> spec.name().equals(name) && spec.hasGpus())) {
                continue;
            }
            var free = freeCodec.decode(node.getMetadata().getAnnotations().get(HetgpuKeys.ANNOTATION_FREE));
            var expected = new HashSet<String>();
            cluster.gpus(name).topology().devices().forEach(device -> expected.add(device.uuid()));
            for (var pod : pods) {
                if (name.equals(pod.getSpec().getNodeName()) && !boundAt(pod).isAfter(free.readAt())) {
                    expected.removeAll(Set.of(devices(pod).split(",")));
                }
            }
            if (!expected.equals(free.uuids()) || !extendersSee(node, pods)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Every extender's informers hold the node's free list and its bound GPU pods as the API server does: a
     * decision taken before they caught up would depend on how fast a watch event travelled, not on the script.
     */
    private boolean extendersSee(Node node, List<Pod> pods) {
        var name = node.getMetadata().getName();
        var bound = new HashSet<String>();
        for (var pod : pods) {
            if (name.equals(pod.getSpec().getNodeName()) && devices(pod) != null && !devices(pod).isEmpty()) {
                bound.add(pod.getMetadata().getUid());
            }
        }
        for (var extender : cluster.extenders()) {
            var view = extender.view();
            var facts = view.facts(name);
            if (facts == null || !node.getMetadata().getAnnotations().get(HetgpuKeys.ANNOTATION_FREE).equals(facts.free())) {
                return false;
            }
            var seen = new HashSet<String>();
            view.boundPods(name).stream().filter(pod -> !pod.released()).forEach(pod -> seen.add(pod.uid()));
            if (!seen.equals(bound)) {
                return false;
            }
        }
        return true;
    }

    private static String devices(Pod pod) {
        var annotations = pod.getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(SimulatedKubelet.DEVICES_ANNOTATION);
    }

    private static Instant boundAt(Pod pod) {
        return pod.getStatus().getConditions().stream().filter(c -> c.getType().equals("PodScheduled"))
                .map(c -> Instant.parse(c.getLastTransitionTime())).findFirst().orElseThrow();
    }

    private Pod pod(PlacementScript.ScriptPod script) {
        var job = script.job();
        var pod = script.pod();
        var requests = pod.requests();
        var builder = new PodBuilder().withNewMetadata().withName(script.name()).withNamespace(NAMESPACE)
                .withUid(UUID.nameUUIDFromBytes(script.name().getBytes(StandardCharsets.UTF_8)).toString()).endMetadata()
                .withNewSpec().withSchedulerName(schedulerName).withPriority(job.priority())
                .addNewContainer().withName("main").withImage("train").withNewResources()
                .addToRequests("cpu", new Quantity(requests.milliCpu() + "m"))
                .addToRequests("memory", new Quantity(Long.toString(requests.memory())))
                .endResources().endContainer().endSpec()
                .withNewStatus().withPhase("Pending").endStatus();
        if (pod.gpus() > 0) {
            builder.editSpec().editFirstContainer().editResources().addToLimits(GPU, new Quantity(Integer.toString(pod.gpus())))
                    .endResources().endContainer().endSpec();
        }
        if (job.distributed()) {
            builder.editMetadata().addToLabels(Map.of(HetgpuKeys.POD_JOB, "job-" + job.id(), HetgpuKeys.POD_ROLE, pod.role())).endMetadata();
        }
        if (!job.models().isEmpty()) {
            builder.editMetadata().addToAnnotations(HetgpuKeys.POD_GPU_MODELS, String.join(",", job.models())).endMetadata();
        }
        if (job.minMemoryMiB() > 0) {
            builder.editMetadata().addToAnnotations(HetgpuKeys.POD_MIN_GPU_MEMORY, job.minMemoryMiB() + "Mi").endMetadata();
        }
        if (!job.dataRack().isEmpty()) {
            builder.editSpec().addNewVolume().withName("data").withNewPersistentVolumeClaim(claim(job.dataRack()), true).endVolume().endSpec();
        }
        return builder.build();
    }
}
