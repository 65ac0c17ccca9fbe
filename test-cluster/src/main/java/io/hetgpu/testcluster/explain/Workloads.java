package io.hetgpu.testcluster.explain;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClass;
import io.hetgpu.testcluster.cluster.ControllerPods;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What the objects given with {@code -f} add to the cluster, as if applied: the pods their controllers would create,
 * the claims, volumes, PriorityClasses, disruption budgets and DRA objects (ResourceClaims, their templates,
 * DeviceClasses) placement reads, and the workload objects themselves
 * (a Job's, JobSet's or training job's member count is read from them). Kinds that make no pods and that placement
 * does not read (a Service, RBAC, an admission policy) are noted and left out; a kind explain does not know is refused,
 * naming it.
 *
 * @param pods     each with the workload that makes it
 * @param created  the workload objects, namespaced
 * @param notes    what was left out, for the reader
 * @param dra      ResourceClaims, ResourceClaimTemplates and DeviceClasses ({@code resource.k8s.io/v1}) the pods name
 */
record Workloads(List<WorkloadPod> pods, List<HasMetadata> created, List<PersistentVolumeClaim> claims, List<PersistentVolume> volumes,
                 List<PriorityClass> priorityClasses, List<PodDisruptionBudget> budgets, List<String> notes, ClusterReading.Dra dra) {

    Workloads {
        pods = List.copyOf(pods);
        created = List.copyOf(created);
        claims = List.copyOf(claims);
        volumes = List.copyOf(volumes);
        priorityClasses = List.copyOf(priorityClasses);
        budgets = List.copyOf(budgets);
        notes = List.copyOf(notes);
    }

    /** A pod a workload would make, and which: "Job bert-finetune". */
    record WorkloadPod(String workload, Pod pod) {
    }

    /** Kinds that make no pods and that placement does not read: applied beside a workload, they change nothing here. */
    private static final Set<String> NOT_PLACED = Set.of("Service", "ServiceAccount", "Role", "RoleBinding", "ClusterRole",
            "ClusterRoleBinding", "ConfigMap", "Secret", "Namespace", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
            "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
            "NetworkPolicy", "Ingress", "HorizontalPodAutoscaler", "LimitRange", "ResourceQuota", "StorageClass",
            "CustomResourceDefinition", "Endpoints", "EndpointSlice", "PodTemplate", "Lease", "Event");
    /** Kinds without a namespace, left without one. */
    private static final Set<String> CLUSTER_SCOPED = Set.of("PersistentVolume", "PriorityClass", "DeviceClass", "Namespace", "ClusterRole",
            "ClusterRoleBinding", "StorageClass", "CustomResourceDefinition", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
            "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration");

    /**
     * The objects as applied in {@code namespace} where they name none.
     *
     * @throws WorkloadFiles.BadInput for a kind explain does not know, or a workload that cannot be read as its kind
     */
    static Workloads of(List<WorkloadFiles.Given> given, String namespace) throws WorkloadFiles.BadInput {
        var pods = new ArrayList<WorkloadPod>();
        var created = new ArrayList<HasMetadata>();
        var claims = new ArrayList<PersistentVolumeClaim>();
        var volumes = new ArrayList<PersistentVolume>();
        var classes = new ArrayList<PriorityClass>();
        var budgets = new ArrayList<PodDisruptionBudget>();
        var resourceClaims = new ArrayList<ResourceClaim>();
        var templates = new ArrayList<ResourceClaimTemplate>();
        var deviceClasses = new ArrayList<DeviceClass>();
        var notPlaced = new ArrayList<String>();
        // Counted before they are built: a count of Jobs each of no pods would otherwise be built, all of them, first.
        long jobs = 0;
        for (var one : given) {
            var object = one.object();
            var kind = object.getKind();
            if (!CLUSTER_SCOPED.contains(kind) && (object.getMetadata().getNamespace() == null || object.getMetadata().getNamespace().isEmpty())) {
                object.getMetadata().setNamespace(namespace);
            }
            var name = kind + " " + object.getMetadata().getName();
            switch (object) {
                case PersistentVolumeClaim claim -> claims.add(claim);
                case PersistentVolume volume -> volumes.add(volume);
                case PriorityClass priorityClass -> classes.add(priorityClass);
                case PodDisruptionBudget budget -> budgets.add(budget);
                case ResourceClaim claim -> resourceClaims.add(claim);
                case ResourceClaimTemplate template -> templates.add(template);
                case DeviceClass deviceClass -> deviceClasses.add(deviceClass);
                default -> {
                    if (ControllerPods.makesPods(object)) {
                        try {
                            jobs += ControllerPods.jobsOf(object);
                            if (jobs > ControllerPods.MAX_JOBS) {
                                throw new WorkloadFiles.BadInput(one.source() + ": " + name + " brings the Jobs to expand to " + jobs
                                        + ", more than the " + ControllerPods.MAX_JOBS + " this expands at once");
                            }
                            ControllerPods.of(object).forEach(pod -> pods.add(new WorkloadPod(name, pod)));
                        } catch (IllegalArgumentException e) {
                            throw new WorkloadFiles.BadInput(one.source() + ": " + e.getMessage());
                        }
                        if (pods.size() > ControllerPods.MAX_PODS) {
                            throw new WorkloadFiles.BadInput(one.source() + ": " + name + " brings the pods to place to " + pods.size()
                                    + ", more than the " + ControllerPods.MAX_PODS + " this places at once");
                        }
                        if (!(object instanceof Pod)) {
                            created.add(object);
                        }
                    } else if (NOT_PLACED.contains(kind)) {
                        notPlaced.add(name);
                    } else {
                        throw new WorkloadFiles.BadInput(one.source() + ": kind " + kind + " (apiVersion " + object.getApiVersion()
                                + ") is not one hetgpu explain knows: it places the pods of Pod, Job, JobSet, StatefulSet, Deployment, "
                                + "ReplicaSet and Kubeflow training jobs (TFJob, PyTorchJob, MPIJob, XGBoostJob, PaddleJob, JAXJob), "
                                + "beside PersistentVolumeClaims, PersistentVolumes, PriorityClasses, PodDisruptionBudgets, and "
                                + "ResourceClaims, ResourceClaimTemplates and DeviceClasses of resource.k8s.io/v1");
                    }
                }
            }
        }
        var notes = new ArrayList<String>();
        if (!notPlaced.isEmpty()) {
            notes.add("left out, as they make no pods and placement does not read them: " + String.join(", ", notPlaced));
        }
        return new Workloads(pods, created, claims, volumes, classes, budgets, notes,
                new ClusterReading.Dra(List.of(), resourceClaims, templates, deviceClasses));
    }
}
