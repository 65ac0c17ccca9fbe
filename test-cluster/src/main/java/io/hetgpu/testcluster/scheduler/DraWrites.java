package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.ContainerExtendedResourceRequest;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodExtendedResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.hetgpu.kubescheduler.dra.ClaimAllocation;
import io.hetgpu.kubescheduler.dra.DeviceRequest;
import io.hetgpu.kubescheduler.dra.ExtendedResourceClaim;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What kube-scheduler's DynamicResources plugin writes before a pod is bound: at PreBind the claim for extended resources
 * is created (named from {@code <pod>-extended-resources-}, owned by the pod, annotated), every allocated claim gets the
 * plugin's finalizer and its {@code status.allocation} with the pod in {@code status.reservedFor}, and the pod its
 * {@code status.extendedResourceClaimStatus}.
 */
public final class DraWrites {

    /** The finalizer kube-scheduler puts on a claim it allocates, so that it is not deleted while allocated. */
    public static final String FINALIZER = "resource.kubernetes.io/delete-protection";
    private static final String SUFFIX_LETTERS = "bcdfghjklmnpqrstvwxz2456789";

    private DraWrites() {
    }

    static void reserve(KubernetesClient client, Pod pod, String node, DraFilter.Fits fits) {
        var ns = pod.getMetadata().getNamespace();
        var extendedName = fits.extended().map(needed -> createExtendedClaim(client, pod, needed));
        for (var allocation : fits.allocations()) {
            var name = allocation.claimName().equals(ExtendedResourceClaim.IN_MEMORY_NAME) ? extendedName.orElseThrow() : allocation.claimName();
            var claims = client.resources(ResourceClaim.class).inNamespace(ns).withName(name);
            claims.patch(PatchContext.of(PatchType.JSON_MERGE), Serialization.asJson(Map.of("metadata", Map.of("finalizers", List.of(FINALIZER)))));
            claims.subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), Serialization.asJson(Map.of("status", status(pod, allocation))));
        }
        for (var name : fits.alreadyAllocated()) {
            // Shared: the pod joins those the claim is reserved for.
            // Read and written whole: a merge patch of the list would have to repeat every consumer.
            client.resources(ResourceClaim.class).inNamespace(ns).withName(name).editStatus(current -> {
                var reserved = new ArrayList<>(current.getStatus() == null || current.getStatus().getReservedFor() == null
                        ? List.<io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference>of() : current.getStatus().getReservedFor());
                if (reserved.stream().noneMatch(r -> pod.getMetadata().getUid().equals(r.getUid()))) {
                    reserved.add(consumer(pod));
                }
                current.getStatus().setReservedFor(reserved);
                return current;
            });
        }
        if (fits.extended().isPresent()) {
            var mappings = fits.extended().get().mappings().stream().map(m -> new ContainerExtendedResourceRequest(m.containerName(),
                    m.requestName(), m.resourceName())).toList();
            var status = new PodExtendedResourceClaimStatus(mappings, extendedName.orElseThrow());
            client.pods().inNamespace(ns).withName(pod.getMetadata().getName()).subresource("status")
                    .patch(PatchContext.of(PatchType.JSON_MERGE), Serialization.asJson(Map.of("status", Map.of("extendedResourceClaimStatus", status))));
        }
    }

    private static Map<String, Object> status(Pod pod, ClaimAllocation allocation) {
        return Map.of("allocation", allocation(allocation), "reservedFor", List.of(consumer(pod)));
    }

    /**
     * The claim as Reserve and PreBind leave it: the plugin's finalizer, its {@code status.allocation} and the pod in
     * {@code status.reservedFor} (a copy; the claim given is not changed).
     */
    public static ResourceClaim allocated(ResourceClaim claim, Pod pod, ClaimAllocation allocation) {
        return new ResourceClaimBuilder(claim).editMetadata().addToFinalizers(FINALIZER).endMetadata()
                .editOrNewStatus().withAllocation(allocation(allocation)).withReservedFor(consumer(pod)).endStatus().build();
    }

    /** A claim allocated before with the pod added to those it is reserved for (a copy). */
    public static ResourceClaim joined(ResourceClaim claim, Pod pod) {
        var reserved = new ArrayList<>(claim.getStatus() == null || claim.getStatus().getReservedFor() == null
                ? List.<io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference>of() : claim.getStatus().getReservedFor());
        if (reserved.stream().noneMatch(r -> pod.getMetadata().getUid().equals(r.getUid()))) {
            reserved.add(consumer(pod));
        }
        return new ResourceClaimBuilder(claim).editOrNewStatus().withReservedFor(reserved).endStatus().build();
    }

    private static io.fabric8.kubernetes.api.model.resource.v1.AllocationResult allocation(ClaimAllocation allocation) {
        var results = allocation.results().stream().map(r -> new DeviceRequestAllocationResultBuilder()
                .withRequest(r.request()).withDriver(r.driver()).withPool(r.pool()).withDevice(r.device()).build()).toList();
        var result = new AllocationResultBuilder().withNewDevices().withResults(results).endDevices()
                .withAllocationTimestamp(Instant.now().toString());
        allocation.nodeName().ifPresent(node -> result.withNodeSelector(new NodeSelectorBuilder().addNewNodeSelectorTerm()
                .addNewMatchField().withKey("metadata.name").withOperator("In").withValues(node).endMatchField()
                .endNodeSelectorTerm().build()));
        return result.build();
    }

    public static io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference consumer(Pod pod) {
        return new ResourceClaimConsumerReferenceBuilder().withResource("pods").withName(pod.getMetadata().getName())
                .withUid(pod.getMetadata().getUid()).build();
    }

    /** The claim created at PreBind, as kube-scheduler creates it from its in-memory one; its name. */
    private static String createExtendedClaim(KubernetesClient client, Pod pod, ExtendedResourceClaim.Needed needed) {
        var claim = extendedClaim(pod, needed, generatedName(pod.getMetadata().getName() + "-extended-resources-"));
        client.resources(ResourceClaim.class).inNamespace(pod.getMetadata().getNamespace()).resource(claim).create();
        return claim.getMetadata().getName();
    }

    /** The claim for extended resources as kube-scheduler makes it from its in-memory one, under that name. */
    public static ResourceClaim extendedClaim(Pod pod, ExtendedResourceClaim.Needed needed, String name) {
        var requests = new ArrayList<io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest>();
        for (var request : needed.claim().requests()) {
            if (request instanceof DeviceRequest.Exactly exactly) {
                requests.add(new DeviceRequestBuilder().withName(exactly.name()).withExactly(new ExactDeviceRequestBuilder()
                        .withDeviceClassName(exactly.request().deviceClassName()).withAllocationMode("ExactCount")
                        .withCount(exactly.request().count()).build()).build());
            }
        }
        return new ResourceClaimBuilder().withNewMetadata().withName(name).withNamespace(pod.getMetadata().getNamespace())
                .addToAnnotations(ExtendedResourceClaim.ANNOTATION, "true")
                .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("v1").withKind("Pod").withName(pod.getMetadata().getName())
                        .withUid(pod.getMetadata().getUid()).withController(true).build())
                .endMetadata()
                .withNewSpec().withNewDevices().withRequests(requests).endDevices().endSpec().build();
    }

    /** A name as the API server makes one from {@code generateName}: the base cut to leave room, five random characters. */
    public static String generatedName(String base) {
        var cut = base.length() > 58 ? base.substring(0, 58) : base;
        var suffix = new StringBuilder();
        var random = ThreadLocalRandom.current();
        for (int i = 0; i < 5; i++) {
            suffix.append(SUFFIX_LETTERS.charAt(random.nextInt(SUFFIX_LETTERS.length())));
        }
        return cut + suffix;
    }
}
