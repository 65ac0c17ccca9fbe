package io.hetgpu.testcluster.cluster;

import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * What Kubeflow's training operator puts in a cluster: its CustomResourceDefinitions, a training job (TFJob,
 * PyTorchJob) with its replica specs, and the pods it creates for the job, labelled and owned as the operator labels
 * and owns them. hetgpu's extender reads such a pod's job from those labels and the job's member count from the job's
 * replica specs; nothing hetgpu-specific is written on them.
 */
public final class TrainingOperator {

    /** The kinds of training job this operator serves. */
    public enum Kind {
        TF_JOB("TFJob", "tfjobs", "tfReplicaSpecs", "tensorflow"),
        PYTORCH_JOB("PyTorchJob", "pytorchjobs", "pytorchReplicaSpecs", "pytorch");

        final String kind;
        final String plural;
        final String specsField;
        /** The container name the operator expects in a replica's template, and the image family. */
        final String container;

        Kind(String kind, String plural, String specsField, String container) {
            this.kind = kind;
            this.plural = plural;
            this.specsField = specsField;
            this.container = container;
        }
    }

    /** The API group and version the operator's jobs are served under. */
    public static final String GROUP = "kubeflow.org";
    public static final String VERSION = "v1";

    /**
     * A training job as created: its kind, where, its UID (the owner its pods name) and how many replicas of each
     * type (Master, Worker, PS…).
     */
    public record Job(Kind kind, String namespace, String name, String uid, Map<String, Integer> replicas) {
        public Job {
            Objects.requireNonNull(kind, "kind");
            replicas = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(replicas));
        }

        /** How many pods the operator creates for it. */
        public int pods() {
            return replicas.values().stream().mapToInt(Integer::intValue).sum();
        }

        /** The name the operator gives the pod of a replica: {@code <job>-<type>-<index>}, the type in lower case. */
        public String podName(String replicaType, int index) {
            return name + "-" + replicaType.toLowerCase(Locale.ROOT) + "-" + index;
        }
    }

    /**
     * What one replica's pod asks for.
     *
     * @param gpus          GPUs of the cluster's resource
     * @param priority      {@code spec.priority}, as PriorityClass admission would fill it in (the test cluster runs none)
     * @param annotations   added to the pod's (hetgpu's card or interconnect wishes, none needed)
     * @param dataClaim     a claim the pod mounts its training data from, or null
     */
    public record Replica(int gpus, int priority, Map<String, String> annotations, String dataClaim) {
        public Replica {
            annotations = Map.copyOf(annotations);
        }

        public static Replica of(int gpus, int priority) {
            return new Replica(gpus, priority, Map.of(), null);
        }
    }

    private final KubernetesClient client;

    public TrainingOperator(KubernetesClient client) {
        this.client = client;
    }

    /**
     * Installs the operator's CustomResourceDefinitions. The API server then serves its kinds in discovery, which is where
     * the extender looks, when it starts, for the kinds it follows job sizes of: install before starting the extender.
     */
    public TrainingOperator install() {
        for (var kind : Kind.values()) {
            CustomResources.define(client, GROUP, VERSION, kind.kind, kind.plural);
        }
        return this;
    }

    /** Creates a training job with {@code replicas} pods of each replica type, as a user submits one; its pods come later. */
    public Job submit(Kind kind, String namespace, String name, Map<String, Integer> replicas) {
        var specs = new LinkedHashMap<String, Object>();
        replicas.forEach((type, count) -> specs.put(type, Map.of("replicas", count, "restartPolicy", "OnFailure")));
        var created = client.genericKubernetesResources(GROUP + "/" + VERSION, kind.kind).inNamespace(namespace)
                .resource(new GenericKubernetesResourceBuilder().withApiVersion(GROUP + "/" + VERSION).withKind(kind.kind)
                        .withNewMetadata().withName(name).withNamespace(namespace).endMetadata()
                        .addToAdditionalProperties("spec", Map.of(kind.specsField, specs)).build())
                .create();
        return new Job(kind, namespace, name, created.getMetadata().getUid(), replicas);
    }

    /**
     * The pod the operator creates for replica {@code index} of {@code replicaType}, addressed to {@code schedulerName} (the
     * job's {@code schedulerName}, as a cluster with hetgpu's scheduler sets it), not created yet.
     */
    public static Pod pod(Job job, String replicaType, int index, Replica replica, String schedulerName) {
        var template = new PodTemplateSpecBuilder().withNewMetadata().addToAnnotations(replica.annotations()).endMetadata()
                .withNewSpec().withSchedulerName(schedulerName).withPriority(replica.priority()).withRestartPolicy("OnFailure")
                .addNewContainer().withName(job.kind().container)
                .withImage(job.kind() == Kind.TF_JOB ? "tensorflow/tensorflow:2.15.0-gpu" : "pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime")
                .withNewResources()
                .addToRequests("cpu", new Quantity(replica.gpus() > 0 ? Integer.toString(4 * replica.gpus()) : "4"))
                .addToRequests("memory", new Quantity(replica.gpus() > 0 ? (32 * replica.gpus()) + "Gi" : "16Gi"))
                .endResources().endContainer().endSpec();
        if (replica.gpus() > 0) {
            template.editSpec().editFirstContainer().editResources()
                    .addToLimits(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity(Integer.toString(replica.gpus())))
                    .endResources().endContainer().endSpec();
        }
        if (replica.dataClaim() != null) {
            template.editSpec().addNewVolume().withName("data").withNewPersistentVolumeClaim(replica.dataClaim(), true).endVolume().endSpec();
        }
        var owner = new ObjectMetaBuilder().withName(job.name()).withNamespace(job.namespace()).withUid(job.uid()).build();
        return ControllerPods.trainingPod(GROUP + "/" + VERSION, job.kind().kind, owner, replicaType, index, template.build());
    }
}
