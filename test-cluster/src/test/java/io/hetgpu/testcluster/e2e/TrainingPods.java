package io.hetgpu.testcluster.e2e;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.testcluster.kubelet.SimulatedKubelet;
import org.awaitility.Awaitility;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Pods submitted to the test cluster's hetgpu scheduler in namespace {@value #NS}, and what their kubelet made of them. */
record TrainingPods(KubernetesClient client) {

    static final String NS = "default";

    Pod submit(String name, int gpus, int priority, Map<String, String> annotations) {
        return submit(name, gpus, priority, annotations, Map.of());
    }

    Pod submit(String name, int gpus, int priority, Map<String, String> annotations, Map<String, String> nodeSelector) {
        var limits = new HashMap<String, Quantity>();
        if (gpus > 0) {
            limits.put(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity(Integer.toString(gpus)));
        }
        var pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(NS).withUid("uid-" + name)
                .addToAnnotations(annotations).endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").withPriority(priority).withNodeSelector(nodeSelector)
                .addNewContainer().withName("main").withImage("train").withNewResources().addToLimits(limits).endResources()
                .endContainer().endSpec().withNewStatus().withPhase("Pending").endStatus().build();
        return client.pods().resource(pod).create();
    }

    /** Deletes every pod of the namespace and waits until none is left: a clean slate between tests of one cluster. */
    void deleteAll() {
        client.pods().inNamespace(NS).delete();
        client.pods().inNamespace(NS).waitUntilCondition(pod -> pod == null, 10, TimeUnit.SECONDS);
    }

    /**
     * Polled rather than watched: a test that awaits hundreds of pods would open and close a watch for each, and a
     * get every 10 ms costs the in-process API server less.
     */
    Pod awaitRunning(String name) {
        var pods = client.pods().inNamespace(NS).withName(name);
        return Awaitility.await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(10))
                .until(pods::get, p -> p != null && "Running".equals(p.getStatus().getPhase()));
    }

    /** The devices the simulated kubelet gave the pod's containers. */
    static List<String> devices(Pod pod) {
        return List.of(pod.getMetadata().getAnnotations().get(SimulatedKubelet.DEVICES_ANNOTATION).split(","));
    }
}
