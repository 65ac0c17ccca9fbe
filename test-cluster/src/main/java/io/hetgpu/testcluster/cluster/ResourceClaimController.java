package io.hetgpu.testcluster.cluster;

import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * kube-controller-manager's resourceclaim controller, as far as scheduling needs it: for each pending pod entry of
 * {@code spec.resourceClaims} that names a ResourceClaimTemplate, a claim made from the template (named from
 * {@code <pod>-<entry>-}, owned by the pod, annotated {@code resource.kubernetes.io/pod-claim-name}) and recorded in the
 * pod's {@code status.resourceClaimStatuses}; a missing template leaves the entry waiting. And the other way: a pod that
 * is gone or finished leaves {@code status.reservedFor}; a claim reserved for no one is deallocated, or deleted when a
 * pod that is gone owned it (a template's claim, the scheduler's claim for extended resources), so that its devices are
 * free again. Run by calling {@link #reconcile} (the test cluster has no controller manager of its own): once per
 * scheduling round is as often as it matters.
 */
public final class ResourceClaimController {

    public static final String POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name";
    private static final String SUFFIX_LETTERS = "bcdfghjklmnpqrstvwxz2456789";

    private final KubernetesClient client;

    public ResourceClaimController(KubernetesClient client) {
        this.client = client;
    }

    /** Makes every missing claim of every pod, and frees the claims of pods that are gone; returns how many it made. */
    public int reconcile() {
        int made = 0;
        var pods = client.pods().inAnyNamespace().list().getItems();
        release(pods);
        for (var pod : pods) {
            var entries = Objects.requireNonNullElse(pod.getSpec().getResourceClaims(), List.<PodResourceClaim>of());
            if (entries.isEmpty() || pod.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            var statuses = new ArrayList<>(pod.getStatus() == null ? List.<PodResourceClaimStatus>of()
                    : Objects.requireNonNullElse(pod.getStatus().getResourceClaimStatuses(), List.<PodResourceClaimStatus>of()));
            var changed = false;
            for (var entry : entries) {
                var template = entry.getResourceClaimTemplateName();
                if (template == null || template.isEmpty() || statuses.stream().anyMatch(s -> Objects.equals(s.getName(), entry.getName()))) {
                    continue;
                }
                var existing = ownedClaim(pod, entry.getName());
                var name = existing != null ? existing : create(pod, entry.getName(), template);
                if (name == null) {
                    continue;
                }
                made += existing == null ? 1 : 0;
                statuses.add(new PodResourceClaimStatus(entry.getName(), name));
                changed = true;
            }
            if (changed) {
                client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName()).editStatus(p -> {
                    if (p.getStatus() == null) {
                        p.setStatus(new io.fabric8.kubernetes.api.model.PodStatus());
                    }
                    p.getStatus().setResourceClaimStatuses(statuses);
                    return p;
                });
            }
        }
        return made;
    }

    /** Pods that are gone or finished taken out of {@code reservedFor}; a claim left reserved for no one freed. */
    private void release(List<Pod> pods) {
        var live = new java.util.HashSet<String>();
        for (var pod : pods) {
            var phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
            if (!"Succeeded".equals(phase) && !"Failed".equals(phase)) {
                live.add(pod.getMetadata().getUid());
            }
        }
        var existing = pods.stream().map(p -> p.getMetadata().getUid()).collect(java.util.stream.Collectors.toSet());
        for (var claim : client.resources(ResourceClaim.class).inAnyNamespace().list().getItems()) {
            var status = claim.getStatus();
            var owners = Objects.requireNonNullElse(claim.getMetadata().getOwnerReferences(), List.<io.fabric8.kubernetes.api.model.OwnerReference>of());
            var ownerGone = owners.stream().anyMatch(o -> "Pod".equals(o.getKind()) && Boolean.TRUE.equals(o.getController())
                    && !existing.contains(o.getUid()));
            var one = client.resources(ResourceClaim.class).inNamespace(claim.getMetadata().getNamespace()).withName(claim.getMetadata().getName());
            if (status == null || status.getAllocation() == null) {
                if (ownerGone) {
                    // The garbage collector's part: a claim whose owning pod is gone goes too.
                    one.delete();
                }
                continue;
            }
            var reserved = Objects.requireNonNullElse(status.getReservedFor(),
                    List.<io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference>of());
            var kept = reserved.stream().filter(r -> !"pods".equals(r.getResource()) || live.contains(r.getUid())).toList();
            if (kept.size() == reserved.size() && !kept.isEmpty()) {
                continue;
            }
            if (!kept.isEmpty()) {
                // Written whole: fabric8's mock server merges lists of a merge patch rather than replacing them.
                one.editStatus(c -> {
                    c.getStatus().setReservedFor(kept);
                    return c;
                });
                continue;
            }
            one.subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), "{\"status\":{\"allocation\":null,\"reservedFor\":null}}");
            one.patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"finalizers\":null}}");
            if (ownerGone) {
                one.delete();
            }
        }
    }

    /** A claim made for this entry before (the pod's status not yet written when the controller stopped). */
    private String ownedClaim(Pod pod, String entry) {
        return client.resources(ResourceClaim.class).inNamespace(pod.getMetadata().getNamespace()).list().getItems().stream()
                .filter(c -> c.getMetadata().getOwnerReferences() != null && c.getMetadata().getOwnerReferences().stream()
                        .anyMatch(o -> Objects.equals(o.getUid(), pod.getMetadata().getUid())))
                .filter(c -> c.getMetadata().getAnnotations() != null && entry.equals(c.getMetadata().getAnnotations().get(POD_CLAIM_NAME_ANNOTATION)))
                .map(c -> c.getMetadata().getName()).findFirst().orElse(null);
    }

    private String create(Pod pod, String entry, String templateName) {
        var ns = pod.getMetadata().getNamespace();
        var template = client.resources(ResourceClaimTemplate.class).inNamespace(ns).withName(templateName).get();
        if (template == null || template.getSpec() == null) {
            return null;
        }
        var claim = fromTemplate(pod, entry, template, generatedName(pod.getMetadata().getName(), entry));
        client.resources(ResourceClaim.class).inNamespace(ns).resource(claim).create();
        return claim.getMetadata().getName();
    }

    /**
     * The claim the controller makes for a pod's entry from its template, under that name: the template's labels and
     * annotations, the entry's name annotated, owned by the pod, the template's spec.
     */
    public static ResourceClaim fromTemplate(Pod pod, String entry, ResourceClaimTemplate template, String name) {
        var ns = pod.getMetadata().getNamespace();
        var meta = template.getSpec().getMetadata();
        return new ResourceClaimBuilder().withNewMetadata().withName(name).withNamespace(ns)
                .withLabels(meta == null ? null : meta.getLabels())
                .withAnnotations(meta == null || meta.getAnnotations() == null ? Map.of() : meta.getAnnotations())
                .addToAnnotations(POD_CLAIM_NAME_ANNOTATION, entry)
                .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("v1").withKind("Pod").withName(pod.getMetadata().getName())
                        .withUid(pod.getMetadata().getUid()).withController(true).withBlockOwnerDeletion(true).build())
                .endMetadata()
                .withSpec(template.getSpec().getSpec()).build();
    }

    /**
     * The controller's {@code generateName}, {@code <pod>-<entry>-}, then the API server's five random characters. A base
     * longer than 57 characters has both names cut in proportion to their lengths (so that the entry's name is not the
     * one lost), as the controller cuts them.
     */
    public static String generatedName(String podName, String entry) {
        var base = podName + "-" + entry + "-";
        final int maxBase = 57;
        if (base.length() > maxBase) {
            base = podName.substring(0, podName.length() * maxBase / base.length()) + "-"
                    + entry.substring(0, entry.length() * maxBase / base.length());
        }
        var suffix = new StringBuilder();
        var random = ThreadLocalRandom.current();
        for (int i = 0; i < 5; i++) {
            suffix.append(SUFFIX_LETTERS.charAt(random.nextInt(SUFFIX_LETTERS.length())));
        }
        return base + suffix;
    }
}
