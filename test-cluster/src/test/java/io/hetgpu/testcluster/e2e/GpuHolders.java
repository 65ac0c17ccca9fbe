package io.hetgpu.testcluster.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.deviceplugin.devices.ContainerEdits;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.kubelet.SimulatedKubelet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;

/**
 * Who holds which GPU, as each party that hands GPUs out says it: the extender's record on each bound pod
 * ({@code hetgpu.io/gpu-devices}), kubelet's allocations (what PodResources reports) and the devices the device plugin
 * gave each container ({@code NVIDIA_VISIBLE_DEVICES}).
 */
record GpuHolders(TestCluster cluster) {

    private static final DeviceAssignmentCodec CODEC = new DeviceAssignmentCodec();

    /** Every pod, live, as the API server holds it. */
    List<Pod> pods() {
        return cluster.client().pods().inAnyNamespace().list().getItems();
    }

    /** Waits until kubelet has admitted every bound pod: each runs with the devices it was given. */
    void awaitAdmitted() {
        Awaitility.await("every bound pod admitted by its kubelet").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                .until(() -> pods().stream().filter(GpuHolders::isBound).allMatch(pod -> "Running".equals(pod.getStatus().getPhase())));
    }

    /**
     * Fails when a GPU is held by two live pods, by the extender's records or by kubelet's allocations, or when a running
     * pod's container was given other GPUs, or in another order, than the extender recorded for it.
     */
    void assertNoGpuGivenTwice() throws InventoryFormatException {
        var byRecord = new HashMap<String, String>();
        var byKubelet = new HashMap<String, String>();
        for (var pod : pods()) {
            if (!isBound(pod)) {
                continue;
            }
            var name = key(pod);
            var node = pod.getSpec().getNodeName();
            var record = record(pod);
            if (record != null) {
                assertThat(record.node()).as("the node %s's record names", name).isEqualTo(node);
                for (var device : record.devices()) {
                    assertThat(byRecord.putIfAbsent(node + "/" + device, name)).as("the recorded holder of %s on %s besides %s", device, node, name)
                            .isNull();
                }
            }
            var allocated = new ArrayList<String>();
            cluster.kubelet(node).allocations().getOrDefault(name, Map.of()).values().forEach(allocated::addAll);
            for (var device : allocated) {
                assertThat(byKubelet.putIfAbsent(node + "/" + device, name)).as("kubelet's holder of %s on %s besides %s", device, node, name)
                        .isNull();
            }
            if ("Running".equals(pod.getStatus().getPhase()) && record != null) {
                assertThat(allocated).as("kubelet's devices for %s", name).containsExactlyInAnyOrderElementsOf(record.devices());
                assertThat(visible(pod)).as("NVIDIA_VISIBLE_DEVICES of %s", name).isEqualTo(String.join(",", record.devices()));
            }
        }
    }

    /** The extender's record of the pod's devices, or null when it has none (a pod without GPUs, or not bound by it). */
    static DeviceAssignment record(Pod pod) throws InventoryFormatException {
        var annotations = pod.getMetadata().getAnnotations();
        var text = annotations == null ? null : annotations.get(HetgpuKeys.POD_GPU_DEVICES);
        return text == null ? null : CODEC.decode(text);
    }

    /** What the device plugin told the pod's container to see; "" for a pod without GPUs. */
    private String visible(Pod pod) {
        return cluster.kubelet(pod.getSpec().getNodeName()).containerEnv(key(pod)).values().stream()
                .map(env -> env.get(ContainerEdits.VISIBLE_DEVICES)).filter(java.util.Objects::nonNull).findFirst().orElse("");
    }

    static boolean isBound(Pod pod) {
        return pod.getSpec().getNodeName() != null && !pod.getSpec().getNodeName().isEmpty();
    }

    /** The GPUs the kubelet gave the pod; none for a pod not admitted or without GPUs. */
    static int gpus(Pod pod) {
        var devices = pod.getMetadata().getAnnotations() == null ? null : pod.getMetadata().getAnnotations().get(SimulatedKubelet.DEVICES_ANNOTATION);
        return devices == null || devices.isEmpty() ? 0 : devices.split(",").length;
    }

    private static String key(Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }
}
