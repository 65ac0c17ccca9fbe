package io.hetgpu.testcluster.explain;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.hetgpu.extender.cluster.ListedClusterView;
import io.hetgpu.extender.cluster.ListedDra;
import io.hetgpu.extender.model.DraDevice;
import io.hetgpu.extender.model.DraLookup;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.dra.ExtendedResourceClaim;
import io.hetgpu.testcluster.cluster.ResourceClaimController;
import io.hetgpu.testcluster.scheduler.DraFilter;
import io.hetgpu.testcluster.scheduler.DraSnapshot;
import io.hetgpu.testcluster.scheduler.DraWrites;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * DRA's objects in explain's copy of the cluster: the slices and DeviceClasses as listed, the claims listed and given,
 * with the claims the resourceclaim controller would make from templates, and what kube-scheduler's DynamicResources
 * plugin writes at Reserve and PreBind played on the copy ({@link #reserve}). The extender's view of the copy is told
 * of every change, as its DRA informers would be, and pods' requests are read from the claims as they now are.
 *
 * <p>One caller at a time: the scheduler driver reserves one pod after another.
 */
final class CopyDra implements DraLookup {

    private final List<ResourceSlice> slices;
    private final List<DeviceClass> classes;
    /** namespace/name -> template */
    private final Map<String, ResourceClaimTemplate> templates = new LinkedHashMap<>();
    /** namespace/name -> claim, in the order listed and made */
    private final Map<String, ResourceClaim> claims = new LinkedHashMap<>();
    private final CardCatalog catalog;
    private volatile ListedDra listed;
    private ListedClusterView view;

    CopyDra(List<ResourceSlice> slices, List<ResourceClaim> claims, List<ResourceClaimTemplate> templates, List<DeviceClass> classes,
            CardCatalog catalog) {
        this.slices = List.copyOf(slices);
        this.classes = List.copyOf(classes);
        this.catalog = catalog;
        claims.forEach(claim -> this.claims.put(key(claim.getMetadata().getNamespace(), claim.getMetadata().getName()), claim));
        templates.forEach(template -> this.templates.put(key(template.getMetadata().getNamespace(), template.getMetadata().getName()), template));
        relist();
    }

    /** The objects as the extender's view reads them now. */
    ListedDra listed() {
        return listed;
    }

    /** The view that is told of each change from now on. */
    void tell(ListedClusterView copy) {
        this.view = copy;
    }

    /**
     * The pod as the resourceclaim controller leaves it: a claim made from the template of each entry that names one
     * and has none yet, recorded in {@code status.resourceClaimStatuses}. An entry whose template is in neither the
     * cluster nor the files is left waiting, as the controller leaves it.
     */
    Pod withClaimsMade(Pod pod) {
        var entries = Objects.requireNonNullElse(pod.getSpec().getResourceClaims(), List.<PodResourceClaim>of());
        if (entries.isEmpty() || pod.getSpec().getNodeName() != null && !pod.getSpec().getNodeName().isEmpty()) {
            return pod;
        }
        var statuses = new ArrayList<>(pod.getStatus() == null ? List.<PodResourceClaimStatus>of()
                : Objects.requireNonNullElse(pod.getStatus().getResourceClaimStatuses(), List.<PodResourceClaimStatus>of()));
        boolean changed = false;
        for (var entry : entries) {
            var templateName = entry.getResourceClaimTemplateName();
            if (templateName == null || templateName.isEmpty() || statuses.stream().anyMatch(s -> Objects.equals(s.getName(), entry.getName()))) {
                continue;
            }
            var template = templates.get(key(pod.getMetadata().getNamespace(), templateName));
            if (template == null || template.getSpec() == null) {
                continue;
            }
            var claim = ResourceClaimController.fromTemplate(pod, entry.getName(), template,
                    ResourceClaimController.generatedName(pod.getMetadata().getName(), entry.getName()));
            claims.put(key(claim.getMetadata().getNamespace(), claim.getMetadata().getName()), claim);
            statuses.add(new PodResourceClaimStatus(entry.getName(), claim.getMetadata().getName()));
            changed = true;
        }
        if (!changed) {
            return pod;
        }
        relist();
        return new PodBuilder(pod).editOrNewStatus().withResourceClaimStatuses(statuses).endStatus().build();
    }

    /** What kube-scheduler's DynamicResources plugin reads at the start of a round. */
    DraSnapshot snapshot() {
        return DraSnapshot.of(slices, classes, List.copyOf(claims.values()));
    }

    /** Whether the copy holds any DRA object at all. */
    boolean inUse() {
        return !slices.isEmpty() || !classes.isEmpty() || !claims.isEmpty();
    }

    /** Reserve and PreBind on the copy: each allocation written to its claim, the pod added to the claims allocated before. */
    void reserve(Pod pod, DraFilter.Fits fits) {
        var namespace = pod.getMetadata().getNamespace();
        for (var allocation : fits.allocations()) {
            ResourceClaim claim;
            if (allocation.claimName().equals(ExtendedResourceClaim.IN_MEMORY_NAME)) {
                var needed = fits.extended().orElseThrow();
                claim = DraWrites.extendedClaim(pod, needed, DraWrites.generatedName(pod.getMetadata().getName() + "-extended-resources-"));
            } else {
                claim = claims.get(key(namespace, allocation.claimName()));
                if (claim == null) {
                    continue;
                }
            }
            var written = DraWrites.allocated(claim, pod, allocation);
            claims.put(key(namespace, written.getMetadata().getName()), written);
        }
        for (var name : fits.alreadyAllocated()) {
            var claim = claims.get(key(namespace, name));
            if (claim != null) {
                claims.put(key(namespace, name), DraWrites.joined(claim, pod));
            }
        }
        relist();
        if (view != null) {
            view.useDra(listed);
        }
    }

    /** The devices the claims reserved for the pod hold, as the node's topology names them, in the claims' order. */
    List<String> devicesOf(Pod pod) {
        var uid = pod.getMetadata().getUid();
        var devices = new ArrayList<String>();
        for (var claim : claims.values()) {
            var status = claim.getStatus();
            if (status == null || status.getAllocation() == null || status.getAllocation().getDevices() == null
                    || status.getReservedFor() == null || status.getReservedFor().stream().noneMatch(r -> Objects.equals(uid, r.getUid()))) {
                continue;
            }
            for (var result : Objects.requireNonNullElse(status.getAllocation().getDevices().getResults(),
                    List.<io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult>of())) {
                devices.add(DraDevice.id(result.getDriver(), result.getPool(), result.getDevice()));
            }
        }
        return devices;
    }

    @Override
    public ResourceClaim claim(String namespace, String name) {
        return listed.claim(namespace, name);
    }

    @Override
    public DeviceClass deviceClass(String name) {
        return listed.deviceClass(name);
    }

    @Override
    public DeviceClass extendedResourceClass(String resourceName) {
        return listed.extendedResourceClass(resourceName);
    }

    private void relist() {
        listed = new ListedDra(slices, List.copyOf(claims.values()), classes, catalog);
    }

    private static String key(String namespace, String name) {
        return namespace + "/" + name;
    }
}
