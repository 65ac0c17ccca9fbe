package io.hetgpu.gpu.inventory;

/** Every label and annotation name of the hetgpu contract, in one place; docs/reference.md explains each to users. */
public final class HetgpuKeys {

    public static final String PREFIX = "hetgpu.io/";

    // Node labels, written by the device plugin.
    public static final String LABEL_GPU_PRESENT = PREFIX + "gpu.present";
    public static final String LABEL_GPU_MODEL = PREFIX + "gpu.model";
    public static final String LABEL_GPU_FAMILY = PREFIX + "gpu.family";
    public static final String LABEL_GPU_TIER = PREFIX + "gpu.tier";
    public static final String LABEL_GPU_MEMORY = PREFIX + "gpu.memory";
    public static final String LABEL_GPU_COUNT = PREFIX + "gpu.count";
    public static final String LABEL_GPU_COMPUTE = PREFIX + "gpu.compute";
    public static final String LABEL_GPU_NVLINK = PREFIX + "gpu.nvlink";

    // Node annotations, written by the device plugin.
    public static final String ANNOTATION_INVENTORY = PREFIX + "gpu-inventory";
    public static final String ANNOTATION_FREE = PREFIX + "gpu-free";

    // Pod annotation, written by the scheduler extender's bind verb (the bind handshake; see DeviceAssignment).
    public static final String POD_GPU_DEVICES = PREFIX + "gpu-devices";

    // Topology labels.
    public static final String LABEL_RACK = "topology.hetgpu.io/rack";
    public static final String LABEL_ZONE = "topology.kubernetes.io/zone";

    // Pod annotations and labels, written by users.
    public static final String POD_GPU_MODELS = PREFIX + "gpu-models";
    public static final String POD_GPU_MIN_MODEL = PREFIX + "gpu-min-model";
    public static final String POD_GPU_EXCLUDE_MODELS = PREFIX + "gpu-exclude-models";
    public static final String POD_MIN_GPU_MEMORY = PREFIX + "min-gpu-memory";
    public static final String POD_MIN_COMPUTE_CAPABILITY = PREFIX + "min-compute-capability";
    public static final String POD_INTERCONNECT = PREFIX + "interconnect";
    public static final String POD_PRIORITY = PREFIX + "priority";
    public static final String POD_GPU_PREFERENCE = PREFIX + "gpu-preference";
    public static final String POD_JOB = PREFIX + "job";
    /** The job's member count, a label or an annotation, for a job whose pods carry no other way to know it. */
    public static final String POD_JOB_SIZE = PREFIX + "job-size";
    public static final String POD_ROLE = PREFIX + "role";
    public static final String POD_WORKLOAD = PREFIX + "workload";
    /**
     * The total work a pod declares it does (steps, images… in its class's own unit), a number: with its run time, a
     * Succeeded pod's speed for {@link #POD_WORKLOAD}'s class, which the extender learns.
     */
    public static final String POD_WORK = PREFIX + "work";
    /**
     * The line a pod writes to its termination message ({@code /dev/termination-log}) with the work it did, as
     * {@code hetgpu.io/work: <number>}: what the extender learns from a pod evicted before the end, and what it prefers
     * to the declared total for one that ran to its end.
     */
    public static final String TERMINATION_WORK_PREFIX = POD_WORK + ":";
    /** RFC 3339 time of the pod's last checkpoint, written by its training code or operator: work after it is lost on eviction. */
    public static final String POD_CHECKPOINTED_AT = PREFIX + "checkpointed-at";
    public static final String KUBEFLOW_JOB = "training.kubeflow.org/job-name";
    public static final String KUBEFLOW_ROLE = "training.kubeflow.org/replica-type";

    // Volume annotation (PV or PVC).
    public static final String DATA_LOCALITY = PREFIX + "data-locality";

    /** The resource users already request; configurable in both programs. */
    public static final String DEFAULT_RESOURCE_NAME = "nvidia.com/gpu";

    private HetgpuKeys() {
    }
}
