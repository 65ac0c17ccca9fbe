package io.hetgpu.testcluster.manifests;

import io.hetgpu.gpu.inventory.HetgpuKeys;

import java.util.List;

/**
 * What the manifests must agree on, in one place. The lead replaces these with the extender's and
 * the device plugin's own constants once those modules land, so that a rename in the code fails here.
 */
final class ExpectedDeployment {

    static final String NAMESPACE = "hetgpu-system";

    // Device plugin.
    static final String DEVICE_PLUGIN = "hetgpu-device-plugin";
    static final String RESOURCE_NAME = HetgpuKeys.DEFAULT_RESOURCE_NAME;
    /** The plugin's status port: its code default, which the manifests and the Dockerfile's EXPOSE use too. */
    static final int DEVICE_PLUGIN_HTTP_PORT = Integer.parseInt(Program.DEVICE_PLUGIN.defaultValue("--http-port"));
    /** The label that hands a node to hetgpu's device plugin. */
    static final String GPU_NODE_LABEL = "hetgpu.io/gpu-node";
    static final String KUBELET_DEVICE_PLUGIN_DIR = "/var/lib/kubelet/device-plugins";
    static final String KUBELET_POD_RESOURCES_DIR = "/var/lib/kubelet/pod-resources";
    static final String KUBELET_POD_RESOURCES_SOCKET = KUBELET_POD_RESOURCES_DIR + "/kubelet.sock";
    static final String SIMULATED_PROFILE_LABEL = "hetgpu.io/simulated-profile";
    static final List<String> SHIPPED_PROFILES = List.of(
            "dgx1-p100", "dgx1-v100", "dgx2-v100", "dgx-a100", "dgx-h100", "v100-pcie-8x", "t4-4x", "k80-4x", "mixed");

    // Scheduler extender: a container of hetgpu-scheduler's pods, its verbs on the pod's loopback address.
    static final String EXTENDER_CONTAINER = "scheduler-extender";
    static final String EXTENDER_CONFIG_MAP = "hetgpu-scheduler-extender-config";
    static final int EXTENDER_PORT = 8888;
    static final String LOOPBACK = "127.0.0.1";
    /** Metrics and probes, on every address; no verb is answered there. */
    static final int EXTENDER_METRICS_PORT = 8889;
    static final String FILTER_VERB = "filter";
    static final String PRIORITIZE_VERB = "prioritize";
    static final String PREEMPT_VERB = "preempt";
    static final String BIND_VERB = "bind";
    static final String HEALTH_PATH = "/healthz";
    static final String READY_PATH = "/readyz";

    // The second scheduler.
    static final String SCHEDULER_NAME = "hetgpu-scheduler";
    /** The Deployment whose pods run kube-scheduler and the extender side by side. */
    static final String SCHEDULER = "hetgpu-scheduler";
    static final String KUBE_SCHEDULER_CONTAINER = "kube-scheduler";
    /** One leader schedules (and calls its own extender); the other stands by. */
    static final int SCHEDULER_REPLICAS = 2;
    static final String SCHEDULER_CONFIG_MAP = "hetgpu-scheduler-config";
    static final String SCHEDULER_CONFIG_KEY = "config.yaml";
    static final String KUBE_SCHEDULER_CONFIG_API = "kubescheduler.config.k8s.io/v1";
    static final String KUBE_SCHEDULER_IMAGE = "registry.k8s.io/kube-scheduler";

    // Priorities.
    static final String HIGH_PRIORITY_CLASS = "training-high";
    static final String LOW_PRIORITY_CLASS = "training-low";
    /** spec.priority of a pod that names no PriorityClass (and no class is globalDefault). */
    static final int DEFAULT_POD_PRIORITY = 0;

    private ExpectedDeployment() {
    }
}
