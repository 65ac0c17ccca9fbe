package io.hetgpu.gpu.inventory;

/**
 * Node labels NVIDIA's own components write, which hetgpu reads on nodes its device plugin does not serve.
 * GPU Feature Discovery (part of NVIDIA's k8s-device-plugin repository, {@code internal/lm}) writes the
 * {@code nvidia.com/gpu.*} labels; the GPU Operator reads {@code nvidia.com/gpu.deploy.*} to decide which
 * of its components run on a node.
 */
public final class NvidiaKeys {

    /**
     * The product name with every run of spaces replaced by one dash and characters outside
     * {@code [A-Za-z0-9._ -]} dropped: {@code Tesla-V100-SXM2-16GB}, {@code NVIDIA-H100-80GB-HBM3}. Sharing adds
     * {@code -SHARED}; MIG's single strategy makes it name the slice, {@code NVIDIA-A100-SXM4-40GB-MIG-1g.5gb}.
     */
    public static final String GFD_PRODUCT = "nvidia.com/gpu.product";
    /** Total memory of one GPU in MiB, as NVML reports it ({@code 16160}); absent when NVML reports none. */
    public static final String GFD_MEMORY = "nvidia.com/gpu.memory";
    /** How many GPUs GFD saw (not how many kubelet offers: sharing multiplies those, unhealthy ones subtract). */
    public static final String GFD_COUNT = "nvidia.com/gpu.count";
    public static final String GFD_COMPUTE_MAJOR = "nvidia.com/gpu.compute.major";
    public static final String GFD_COMPUTE_MINOR = "nvidia.com/gpu.compute.minor";
    /** {@code volta}, {@code ampere}, {@code ada-lovelace}, {@code hopper}…: implied by the compute capability. */
    public static final String GFD_FAMILY = "nvidia.com/gpu.family";
    /** Replicas per GPU under time-slicing or MPS; above 1 each advertised {@code nvidia.com/gpu} is a share. */
    public static final String GFD_REPLICAS = "nvidia.com/gpu.replicas";
    /**
     * {@code <cluster UUID>.<clique ID>} of a multi-node NVLink fabric (GB200 NVL72 and the like), written only
     * when every fabric-attached GPU of the node is in one clique: the node's GPUs then reach each other over NVLink.
     */
    public static final String GFD_CLIQUE = "nvidia.com/gpu.clique";

    /** The GPU Operator runs its device plugin on a node unless this label is {@code false}. */
    public static final String OPERATOR_DEPLOY_DEVICE_PLUGIN = "nvidia.com/gpu.deploy.device-plugin";

    private NvidiaKeys() {
    }
}
