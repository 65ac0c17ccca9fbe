package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.hetgpu.extender.job.JobMembership;
import io.hetgpu.extender.job.JobSizes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Job sizes from one listing of the objects that hold them (the kinds {@link JobObjectSizes} follows, each asked of API
 * discovery and listed once where served), read by the same rule ({@link JobObjectCounts}), plus objects a caller is
 * about to create: what a tool sees that reads the cluster once and asks where a workload would go.
 */
public final class ListedJobSizes implements JobSizes {

    /** One kind as listed: why its counts cannot be read ("" when they can), and its objects. */
    private record Listing(String standing, List<GenericKubernetesResource> objects) {
        Listing {
            objects = List.copyOf(objects);
        }
    }

    private final Map<JobObjectKind, Listing> listings;
    private final Map<JobObjectKind, JobObjectCounts.KindTable> tables = new HashMap<>();

    private ListedJobSizes(Map<JobObjectKind, Listing> listings) {
        this.listings = Map.copyOf(listings);
        listings.forEach((kind, listing) -> {
            var table = new SizeTable(kind.count());
            listing.objects().forEach(object -> table.put(table.getKey(object), object));
            tables.put(kind, new JobObjectCounts.KindTable() {
                @Override
                public String standing() {
                    return listing.standing().isEmpty() ? null : listing.standing();
                }

                @Override
                public ObjectCount count(String namespace, String name) {
                    return table.count(namespace, name);
                }
            });
        });
    }

    /**
     * Asks API discovery which kinds the cluster serves and lists each served one once (get and list only). A kind the
     * caller may not list has its sizes unknown, saying so, as the extender's would while its ClusterRole lacks it.
     *
     * @throws KubernetesClientException when discovery itself fails: then nothing can be said of any kind
     */
    public static ListedJobSizes list(KubernetesClient client) {
        var answers = new HashMap<String, Optional<APIResourceList>>();
        var listings = new LinkedHashMap<JobObjectKind, Listing>();
        for (var kind : JobObjectKind.ALL) {
            var version = kind.servedVersion(apiVersion -> answers.computeIfAbsent(apiVersion,
                    // null on 404: the group or version is not served at all.
                    asked -> Optional.ofNullable(client.getApiResources(asked))));
            if (version.isEmpty()) {
                listings.put(kind, new Listing("the cluster does not serve " + kind.served(), List.of()));
                continue;
            }
            try {
                listings.put(kind, new Listing("", client.genericKubernetesResources(kind.context(version)).inAnyNamespace().list().getItems()));
            } catch (KubernetesClientException e) {
                listings.put(kind, new Listing("listing " + kind.resource() + " failed (" + ApiFaults.describe(e) + ")", List.of()));
            }
        }
        return new ListedJobSizes(listings);
    }

    /**
     * Sizes as a cluster serving every kind would read them from {@code objects} alone (rendered manifests, say), by the
     * same rule as the extender's.
     */
    public static ListedJobSizes of(List<? extends HasMetadata> objects) {
        var listings = new LinkedHashMap<JobObjectKind, Listing>();
        JobObjectKind.ALL.forEach(kind -> listings.put(kind, new Listing("", List.of())));
        return new ListedJobSizes(listings).with(objects);
    }

    /** As if nothing held a count: only what pods state is known (for a cluster read without discovery). */
    public static ListedJobSizes none() {
        var listings = new LinkedHashMap<JobObjectKind, Listing>();
        JobObjectKind.ALL.forEach(kind -> listings.put(kind, new Listing("the cluster does not serve " + kind.served(), List.of())));
        return new ListedJobSizes(listings);
    }

    /**
     * These sizes with {@code objects} created too (a Job, JobSet or training job given with a workload): each counted where
     * the cluster serves its kind, for only there would the extender read it; an object of a kind not served, or of no kind
     * sizes are read from, adds nothing.
     */
    public ListedJobSizes with(List<? extends HasMetadata> objects) {
        var next = new LinkedHashMap<>(listings);
        for (var object : objects) {
            var generic = object instanceof GenericKubernetesResource given ? given
                    : Serialization.jsonMapper().convertValue(object, GenericKubernetesResource.class);
            for (var kind : JobObjectKind.ALL) {
                var listing = next.get(kind);
                if (kind.kind().equals(generic.getKind()) && generic.getApiVersion() != null
                        && generic.getApiVersion().startsWith(kind.group() + "/") && listing.standing().isEmpty()) {
                    var objectsOfKind = new ArrayList<>(listing.objects());
                    objectsOfKind.add(generic);
                    next.put(kind, new Listing("", objectsOfKind));
                }
            }
        }
        return new ListedJobSizes(next);
    }

    /** Why some kinds' counts cannot be read other than not being served (a list refused): for a note to the reader. */
    public List<String> refusals() {
        return listings.values().stream().map(Listing::standing).filter(standing -> standing.startsWith("listing ")).toList();
    }

    @Override
    public OptionalInt membersOf(JobMembership job) {
        return JobObjectCounts.membersOf(job, tables::get);
    }

    @Override
    public Optional<String> whyUnknown(JobMembership job) {
        return JobObjectCounts.whyUnknown(job, tables::get);
    }
}
