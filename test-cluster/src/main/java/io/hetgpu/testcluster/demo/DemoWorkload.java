package io.hetgpu.testcluster.demo;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A realistic mix, as a data-science team submits it at once:
 * <ul>
 *   <li>{@code resnet}: a high-priority distributed TensorFlow job, 2 parameter servers (CPU) and 4
 *       workers of 2 NVLink-joined GPUs, reading ImageNet from a volume in {@link DemoCluster#DATA_RACK};</li>
 *   <li>{@code bert-large}: a high-priority 8-GPU NVLink job that needs 40 GiB per GPU;</li>
 *   <li>{@code sweep}: a low-priority hyper-parameter sweep of 10 single-GPU trials, each running on its own;</li>
 *   <li>{@code serving}: 3 CPU-only model-serving replicas, each running on its own.</li>
 * </ul>
 * Pods carry {@code spec.priority} as PriorityClass admission would fill it in: the in-process API
 * server does not run admission.
 */
public final class DemoWorkload {

    public static final String NAMESPACE = "ml";
    public static final String DATA_CLAIM = "imagenet";
    /** The well-known labels of an application's pods. */
    public static final String APP = "app.kubernetes.io/name";
    public static final String COMPONENT = "app.kubernetes.io/component";
    private static final String GPU = HetgpuKeys.DEFAULT_RESOURCE_NAME;

    /** The values of manifests/base/priority-classes.yaml. */
    static final int HIGH = 1000;
    static final int LOW = -100;

    private DemoWorkload() {
    }

    /** The training-data volume and its claim; the volume's location is told with hetgpu's annotation. */
    public static List<HasMetadata> volumes() {
        var volume = new PersistentVolumeBuilder().withNewMetadata().withName("imagenet-nfs")
                .addToAnnotations(HetgpuKeys.DATA_LOCALITY, "rack=" + DemoCluster.DATA_RACK).endMetadata()
                .withNewSpec().addToCapacity("storage", new Quantity("2Ti")).withAccessModes("ReadOnlyMany")
                .withNewNfs().withServer("nfs-a.storage.local").withPath("/imagenet").endNfs()
                .withNewClaimRef().withNamespace(NAMESPACE).withName(DATA_CLAIM).endClaimRef().endSpec()
                .withNewStatus().withPhase("Bound").endStatus().build();
        var claim = new PersistentVolumeClaimBuilder().withNewMetadata().withName(DATA_CLAIM).withNamespace(NAMESPACE).endMetadata()
                .withNewSpec().withAccessModes("ReadOnlyMany").withVolumeName("imagenet-nfs")
                .withNewResources().addToRequests("storage", new Quantity("2Ti")).endResources().endSpec()
                .withNewStatus().withPhase("Bound").endStatus().build();
        return List.of(volume, claim);
    }

    /**
     * The pods in submission order. kube-scheduler takes equal priorities oldest first and the API
     * server stamps creation to the second, so the 8-GPU job is submitted first: otherwise whether it or
     * the resnet workers reach the H100 box first would depend on where a second boundary falls.
     */
    public static List<Pod> pods(String schedulerName) {
        var pods = new ArrayList<Pod>();
        pods.add(pod(schedulerName, "bert-large-0", "bert-large", "worker", HIGH, 8,
                Map.of(HetgpuKeys.POD_INTERCONNECT, "nvlink", HetgpuKeys.POD_MIN_GPU_MEMORY, "40Gi")));
        for (int i = 0; i < 2; i++) {
            pods.add(pod(schedulerName, "resnet-ps-" + i, "resnet", "ps", HIGH, 0, Map.of()));
        }
        for (int i = 0; i < 4; i++) {
            pods.add(pod(schedulerName, "resnet-worker-" + i, "resnet", "worker", HIGH, 2, Map.of(HetgpuKeys.POD_INTERCONNECT, "nvlink")));
        }
        for (int i = 0; i < 10; i++) {
            pods.add(independent(schedulerName, "sweep-" + i, "sweep", "trial", LOW, 1));
        }
        for (int i = 0; i < 3; i++) {
            pods.add(independent(schedulerName, "serving-" + i, "serving", "server", 0, 0));
        }
        return pods;
    }

    /** A pod of a job ({@code hetgpu.io/job}, {@code hetgpu.io/role}), which runs only once every pod of its job runs. */
    static Pod pod(String schedulerName, String name, String job, String role, int priority, int gpus, Map<String, String> annotations) {
        return pod(schedulerName, name, Map.of(HetgpuKeys.POD_JOB, job, HetgpuKeys.POD_ROLE, role), priority, gpus, annotations,
                job.equals("resnet"));
    }

    /**
     * A pod that runs on its own, one of several of an application ({@code app.kubernetes.io/name}, {@code
     * app.kubernetes.io/component}): a trial of a sweep, a serving replica. They are no job of several pods: each starts
     * whenever it can, so hetgpu places each alone.
     */
    static Pod independent(String schedulerName, String name, String app, String component, int priority, int gpus) {
        return pod(schedulerName, name, Map.of(APP, app, COMPONENT, component), priority, gpus, Map.of(), false);
    }

    private static Pod pod(String schedulerName, String name, Map<String, String> labels, int priority, int gpus, Map<String, String> annotations,
                           boolean readsData) {
        var builder = new PodBuilder().withNewMetadata().withName(name).withNamespace(NAMESPACE)
                .withUid(java.util.UUID.nameUUIDFromBytes(name.getBytes(java.nio.charset.StandardCharsets.UTF_8)).toString())
                .addToLabels(labels)
                .addToAnnotations(annotations).endMetadata()
                .withNewSpec().withSchedulerName(schedulerName).withPriority(priority)
                .withPriorityClassName(priority == HIGH ? "training-high" : priority == LOW ? "training-low" : null)
                .addNewContainer().withName("main").withImage(gpus > 0 ? "tensorflow/tensorflow:2.15.0-gpu" : "tensorflow/serving:2.15.0")
                .withNewResources()
                .addToRequests("cpu", new Quantity(gpus > 0 ? Integer.toString(4 * gpus) : "4"))
                .addToRequests("memory", new Quantity(gpus > 0 ? (32 * gpus) + "Gi" : "16Gi"))
                .endResources().endContainer().endSpec()
                .withNewStatus().withPhase("Pending").endStatus();
        if (gpus > 0) {
            builder.editSpec().editFirstContainer().editResources().addToLimits(GPU, new Quantity(Integer.toString(gpus)))
                    .endResources().endContainer().endSpec();
        }
        if (readsData) {
            builder.editSpec().addNewVolume().withName("data").withNewPersistentVolumeClaim(DATA_CLAIM, true).endVolume().endSpec();
        }
        return builder.build();
    }
}
