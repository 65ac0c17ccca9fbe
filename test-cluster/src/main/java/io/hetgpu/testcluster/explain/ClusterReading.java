package io.hetgpu.testcluster.explain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.hetgpu.extender.cluster.ApiFaults;
import io.hetgpu.extender.cluster.ListedJobSizes;
import io.hetgpu.extender.throughput.LearnedState;
import io.hetgpu.extender.throughput.LearnedStateCodec;
import io.hetgpu.testcluster.throughputs.ThroughputsCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The cluster as one read shows it: one list each of nodes, pods, PersistentVolumes and claims (what the extender's
 * informers hold), PriorityClasses (what admission gives a new pod) and PodDisruptionBudgets (what preemption weighs),
 * the objects job sizes are read from, and DRA's (ResourceSlices, ResourceClaims, their templates, DeviceClasses), where API
 * discovery says the cluster serves them. Only get and list: no
 * watch, no write.
 *
 * @param server  where the API server is, for the report
 * @param notes   what could not be read and is done without (a list refused that placement can do without)
 * @param learned what the extender has learned of workload speeds (its ConfigMap {@code hetgpu-throughputs} in
 *                {@code hetgpu-system}), so that pods naming a class are ranked as the extender ranks them; empty when
 *                there is none or it cannot be read (a note says which)
 * @param dra     DRA's objects where the cluster serves {@code resource.k8s.io/v1}: what kube-scheduler's DynamicResources
 *                plugin and the extender's DRA informers read; {@link Dra#NONE} where it does not, or refuses them (a note
 *                says which)
 */
record ClusterReading(String server, List<Node> nodes, List<Pod> pods, List<PersistentVolume> volumes, List<PersistentVolumeClaim> claims,
                      List<PriorityClass> priorityClasses, List<PodDisruptionBudget> budgets, ListedJobSizes sizes, List<String> notes,
                      LearnedState learned, Dra dra) {

    /** ResourceSlices, ResourceClaims, ResourceClaimTemplates and DeviceClasses as listed. */
    record Dra(List<ResourceSlice> slices, List<ResourceClaim> claims, List<ResourceClaimTemplate> templates, List<DeviceClass> classes) {

        static final Dra NONE = new Dra(List.of(), List.of(), List.of(), List.of());

        Dra {
            slices = List.copyOf(slices);
            claims = List.copyOf(claims);
            templates = List.copyOf(templates);
            classes = List.copyOf(classes);
        }
    }

    /** The group and version of DRA's structured parameters, GA since Kubernetes 1.34. */
    static final String DRA_API = "resource.k8s.io/v1";

    ClusterReading {
        nodes = List.copyOf(nodes);
        pods = List.copyOf(pods);
        volumes = List.copyOf(volumes);
        claims = List.copyOf(claims);
        priorityClasses = List.copyOf(priorityClasses);
        budgets = List.copyOf(budgets);
        notes = List.copyOf(notes);
    }

    /** The cluster cannot be read: the API server is not there, or refuses what placement cannot do without. */
    static final class Unreadable extends Exception {
        Unreadable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    static ClusterReading of(KubernetesClient client) throws Unreadable {
        var server = client.getMasterUrl() == null ? "(no server)" : client.getMasterUrl().toString().replaceAll("/$", "");
        var notes = new ArrayList<String>();
        var nodes = required(server, "nodes", () -> client.nodes().list().getItems());
        var pods = required(server, "pods", () -> client.pods().inAnyNamespace().list().getItems());
        var volumes = required(server, "persistentvolumes", () -> client.persistentVolumes().list().getItems());
        var claims = required(server, "persistentvolumeclaims", () -> client.persistentVolumeClaims().inAnyNamespace().list().getItems());
        var classes = optional(notes, "priorityclasses", "pods are taken at the priority they state (spec.priority), else 0",
                () -> client.scheduling().v1().priorityClasses().list().getItems());
        var budgets = optional(notes, "poddisruptionbudgets", "preemption weighs no disruption budget",
                () -> client.policy().v1().podDisruptionBudget().inAnyNamespace().list().getItems());
        ListedJobSizes sizes;
        try {
            sizes = ListedJobSizes.list(client);
            sizes.refusals().forEach(refusal -> notes.add(refusal + ": those jobs' sizes are unknown"));
        } catch (KubernetesClientException e) {
            notes.add("asking API discovery which job kinds the cluster serves failed (" + ApiFaults.describe(e)
                    + "): only sizes pods state (hetgpu.io/job-size) are known");
            sizes = ListedJobSizes.none();
        }
        var learned = learned(client, notes);
        return new ClusterReading(server, nodes, pods, volumes, claims, classes, budgets, sizes, notes, learned, dra(client, notes));
    }

    /**
     * DRA's objects where API discovery says the cluster serves them; each list refused is done without, with a note, as
     * an extender whose informer may not list them does without.
     */
    private static Dra dra(KubernetesClient client, List<String> notes) {
        try {
            var served = client.getApiResources(DRA_API);
            if (served == null || served.getResources() == null
                    || served.getResources().stream().noneMatch(r -> "resourceslices".equals(r.getName()))) {
                return Dra.NONE;
            }
        } catch (KubernetesClientException e) {
            notes.add("asking API discovery whether the cluster serves " + DRA_API + " failed (" + ApiFaults.describe(e)
                    + "): DRA's objects are not read, and pods with ResourceClaims are explained without them");
            return Dra.NONE;
        }
        var slices = optional(notes, "resourceslices", "no node's GPUs are read from DRA drivers' slices",
                () -> client.resources(ResourceSlice.class).list().getItems());
        var claims = optional(notes, "resourceclaims", "pods' ResourceClaims and the devices they hold are unknown",
                () -> client.resources(ResourceClaim.class).inAnyNamespace().list().getItems());
        var templates = optional(notes, "resourceclaimtemplates", "claims made from templates are made only from those given with -f",
                () -> client.resources(ResourceClaimTemplate.class).inAnyNamespace().list().getItems());
        var classes = optional(notes, "deviceclasses", "claims naming a DeviceClass cannot be allocated",
                () -> client.resources(DeviceClass.class).list().getItems());
        return new Dra(slices, claims, templates, classes);
    }

    /** The extender's learned state, read as the extender reads it at start; empty, with a note, where it cannot be. */
    private static LearnedState learned(KubernetesClient client, List<String> notes) {
        var where = ThroughputsCommand.DEFAULT_NAMESPACE + "/" + ThroughputsCommand.CONFIG_MAP;
        var without = ": pods that name a workload class are ranked without learned speeds";
        try {
            var configMap = client.configMaps().inNamespace(ThroughputsCommand.DEFAULT_NAMESPACE).withName(ThroughputsCommand.CONFIG_MAP).get();
            var document = configMap == null || configMap.getData() == null ? null : configMap.getData().get(ThroughputsCommand.DATA_KEY);
            if (document == null) {
                return LearnedState.EMPTY;
            }
            return LearnedStateCodec.fromJson(document);
        } catch (KubernetesClientException e) {
            notes.add("reading ConfigMap " + where + " failed (" + ApiFaults.describe(e) + ")" + without);
        } catch (IllegalArgumentException e) {
            notes.add("ConfigMap " + where + ", " + ThroughputsCommand.DATA_KEY + ": " + e.getMessage() + without);
        }
        return LearnedState.EMPTY;
    }

    private static <T> List<T> required(String server, String resource, Supplier<List<T>> list) throws Unreadable {
        try {
            return list.get();
        } catch (KubernetesClientException e) {
            if (e.getCode() <= 0) {
                throw new Unreadable("listing " + resource + " from " + server + " failed: no answer (" + unanswered(e) + ")", e);
            }
            throw new Unreadable("listing " + resource + " from " + server + " failed: " + ApiFaults.describe(e)
                    + " (hetgpu explain needs get and list on nodes, pods, persistentvolumes and persistentvolumeclaims)", e);
        }
    }

    private static String unanswered(Throwable failure) {
        return KubeconfigChoice.unanswered(failure);
    }

    private static <T> List<T> optional(List<String> notes, String resource, String consequence, Supplier<List<T>> list) {
        try {
            return list.get();
        } catch (KubernetesClientException e) {
            notes.add("listing " + resource + " failed (" + ApiFaults.describe(e) + "): " + consequence);
            return List.of();
        }
    }
}
