package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.Map;

/** Nodes and pods as the API server holds them, for scheduler tests. */
final class ClusterObjects {

    private ClusterObjects() {
    }

    static Node node(String name, int gpus) {
        var allocatable = new java.util.HashMap<String, Quantity>(Map.of(
                "cpu", new Quantity("32"), "memory", new Quantity("256Gi"), "pods", new Quantity("110")));
        if (gpus > 0) {
            allocatable.put("nvidia.com/gpu", new Quantity(Integer.toString(gpus)));
        }
        return new NodeBuilder().withNewMetadata().withName(name).addToLabels("kubernetes.io/hostname", name).endMetadata()
                .withNewStatus().withAllocatable(allocatable).withCapacity(allocatable).endStatus().build();
    }

    static Pod pod(String name, int gpus, int priority) {
        var limits = gpus > 0 ? Map.of("nvidia.com/gpu", new Quantity(Integer.toString(gpus))) : Map.<String, Quantity>of();
        return new PodBuilder().withNewMetadata().withName(name).withNamespace("default").withUid("uid-" + name).endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").withPriority(priority)
                .addNewContainer().withName("main").withImage("tensorflow/tensorflow:2.15.0-gpu")
                .withNewResources().withLimits(limits).addToRequests("cpu", new Quantity("4")).addToRequests("memory", new Quantity("16Gi"))
                .endResources().endContainer().endSpec()
                .withNewStatus().withPhase("Pending").endStatus().build();
    }
}
