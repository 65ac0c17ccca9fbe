package io.hetgpu.extender.model;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.extender.job.JobMembership;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.tier.CardRequirements;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads a {@link PodRequest} from a Kubernetes Pod. Every problem is collected, so one message tells a
 * user everything wrong with the pod at once, each part naming the field and quoting the value.
 */
public final class PodRequestParser {

    /** The most GPUs one pod may ask for: more than any node holds (a DGX-2 has 16), and a bound on every sum below. */
    public static final int MAX_GPUS_PER_POD = 64;

    private final String resourceName;
    private final CardCatalog catalog;
    /** The workload classes the admin's throughput table lists (lower case); empty: no table, any class accepted. */
    private final Set<String> workloadClasses;
    /** Where a pod's ResourceClaims and their DeviceClasses are looked up. */
    private final DraLookup dra;

    public PodRequestParser(String resourceName, CardCatalog catalog) {
        this(resourceName, catalog, Set.of());
    }

    /**
     * @param workloadClasses the classes of the configured throughput table, lower case. With a table, a pod naming a
     *                        class it does not list is refused, like a card model the tier table does not know: a typo
     *                        would otherwise rank the pod by tier without a word. Without one, the annotation has no effect.
     */
    public PodRequestParser(String resourceName, CardCatalog catalog, Set<String> workloadClasses) {
        this(resourceName, catalog, workloadClasses, DraLookup.NONE);
    }

    private PodRequestParser(String resourceName, CardCatalog catalog, Set<String> workloadClasses, DraLookup dra) {
        this.resourceName = Objects.requireNonNull(resourceName, "resourceName");
        this.catalog = Objects.requireNonNull(catalog, "catalog");
        this.workloadClasses = new TreeSet<>(workloadClasses);
        this.dra = Objects.requireNonNull(dra, "dra");
    }

    /** This reader, reading pods' ResourceClaims from {@code lookup} ({@link ClaimRequestReader}). */
    public PodRequestParser withDra(DraLookup lookup) {
        return new PodRequestParser(resourceName, catalog, workloadClasses, lookup);
    }

    public CardCatalog catalog() {
        return catalog;
    }

    public String resourceName() {
        return resourceName;
    }

    public PodRequest parse(Pod pod) throws InvalidPodRequestException {
        var problems = new ArrayList<String>();
        var metadata = pod.getMetadata();
        var labels = metadata == null || metadata.getLabels() == null ? Map.<String, String>of() : metadata.getLabels();
        var annotations = metadata == null || metadata.getAnnotations() == null ? Map.<String, String>of() : metadata.getAnnotations();

        int gpus = 0;
        try {
            gpus = gpuCount(pod);
        } catch (InvalidPodRequestException e) {
            problems.add(e.getMessage());
        }
        var cards = CardRequirements.read(annotations, catalog, problems);
        var claimed = ClaimRequestReader.ClaimRequest.NONE;
        if (dra != DraLookup.NONE || hasClaims(pod)) {
            claimed = ClaimRequestReader.read(pod, dra, resourceName, gpus, catalog);
            problems.addAll(claimed.problems());
            gpus += claimed.gpus();
            cards = merged(cards, claimed.cards());
        }
        boolean nvlink = interconnect(annotations.get(HetgpuKeys.POD_INTERCONNECT), problems) || claimed.nvlink();
        var hint = choice(annotations, HetgpuKeys.POD_PRIORITY, PriorityHint.class, PriorityHint.UNSET, problems);
        var preference = choice(annotations, HetgpuKeys.POD_GPU_PREFERENCE, GpuPreference.class, GpuPreference.UNSET, problems);
        var workload = annotations.getOrDefault(HetgpuKeys.POD_WORKLOAD, "").strip();
        if (!workload.isEmpty() && !workloadClasses.isEmpty() && !workloadClasses.contains(workload.toLowerCase(Locale.ROOT))) {
            problems.add(HetgpuKeys.POD_WORKLOAD + ": unknown workload class " + Quote.of(workload) + " (the throughput table lists: "
                    + String.join(", ", workloadClasses) + ")");
        }
        var membership = JobMembershipReader.read(pod, problems);
        if (!problems.isEmpty()) {
            throw new InvalidPodRequestException(String.join("; ", problems));
        }

        var spec = pod.getSpec();
        int specPriority = spec == null || spec.getPriority() == null ? 0 : spec.getPriority();
        var claims = new ArrayList<String>();
        if (spec != null && spec.getVolumes() != null) {
            for (var volume : spec.getVolumes()) {
                // JSON may hold a null among the volumes; it names no claim.
                if (volume != null && volume.getPersistentVolumeClaim() != null && volume.getPersistentVolumeClaim().getClaimName() != null) {
                    claims.add(volume.getPersistentVolumeClaim().getClaimName());
                }
            }
        }
        var job = membership.map(JobMembership::name).orElse("");
        // A pod of no job may still name its role (hetgpu.io/role): kept, as before.
        var role = membership.map(JobMembership::role).orElseGet(() -> labels.getOrDefault(HetgpuKeys.POD_ROLE, "").strip().toLowerCase(Locale.ROOT));
        return new PodRequest(
                metadata == null || metadata.getNamespace() == null ? "default" : metadata.getNamespace(),
                metadata == null || metadata.getName() == null ? "" : metadata.getName(),
                metadata == null || metadata.getUid() == null ? "" : metadata.getUid(),
                gpus, cards, nvlink, specPriority, hint, preference, job, role, claims,
                workload, spec == null || !"Never".equals(spec.getPreemptionPolicy()), claimed.note());
    }

    private static boolean hasClaims(Pod pod) {
        return pod.getSpec() != null && pod.getSpec().getResourceClaims() != null && !pod.getSpec().getResourceClaims().isEmpty();
    }

    /**
     * The annotations' requirements with the claims' added: models the annotations name win over the claims' (both are
     * the pod author's), memory, compute capability and tier the stricter of the two.
     */
    static CardRequirements merged(CardRequirements annotated, CardRequirements claimed) {
        if (claimed.isAny()) {
            return annotated;
        }
        return new CardRequirements(annotated.models().isEmpty() ? claimed.models() : annotated.models(),
                annotated.minTier().rank() >= claimed.minTier().rank() ? annotated.minTier() : claimed.minTier(),
                annotated.excludedModels(), Math.max(annotated.minMemoryMiB(), claimed.minMemoryMiB()),
                annotated.minComputeCapability().isAtLeast(claimed.minComputeCapability()) ? annotated.minComputeCapability()
                        : claimed.minComputeCapability());
    }

    /**
     * GPUs the pod holds while it runs, by the Kubernetes rule for effective requests: the larger of the
     * sum over app containers (plus restartable "sidecar" init containers, which run alongside them) and
     * the largest single init container (plus the sidecars started before it).
     */
    public int gpuCount(Pod pod) throws InvalidPodRequestException {
        var spec = pod.getSpec();
        if (spec == null) {
            return 0;
        }
        long sidecars = 0;
        long initPeak = 0;
        if (spec.getInitContainers() != null) {
            for (var init : spec.getInitContainers()) {
                long count = containerGpus(init, "initContainers");
                if (init != null && "Always".equals(init.getRestartPolicy())) {
                    sidecars += count;
                    initPeak = Math.max(initPeak, sidecars);
                } else {
                    initPeak = Math.max(initPeak, sidecars + count);
                }
            }
        }
        long apps = sidecars;
        if (spec.getContainers() != null) {
            for (var container : spec.getContainers()) {
                apps += containerGpus(container, "containers");
            }
        }
        long total = Math.max(apps, initPeak);
        if (total > MAX_GPUS_PER_POD) {
            throw new InvalidPodRequestException("resources.limits[" + resourceName + "]: at most " + MAX_GPUS_PER_POD
                    + " GPUs per pod, got " + total);
        }
        return (int) total;
    }

    private long containerGpus(Container container, String list) throws InvalidPodRequestException {
        // JSON may hold a null among the containers; it runs nothing and holds no GPU.
        if (container == null) {
            return 0;
        }
        var resources = container.getResources();
        if (resources == null) {
            return 0;
        }
        // Extended resources cannot be overcommitted: a limit implies an equal request, so either names the count.
        Quantity quantity = resources.getLimits() == null ? null : resources.getLimits().get(resourceName);
        String field = "limits";
        if (quantity == null && resources.getRequests() != null) {
            quantity = resources.getRequests().get(resourceName);
            field = "requests";
        }
        if (quantity == null) {
            return 0;
        }
        var where = list + "[" + container.getName() + "].resources." + field + "[" + resourceName + "]";
        BigDecimal value;
        try {
            value = Quantity.getAmountInBytes(quantity);
        } catch (RuntimeException e) {
            throw new InvalidPodRequestException(where + ": expected a whole number of GPUs, got " + Quote.of(quantity));
        }
        if (value.signum() < 0 || value.stripTrailingZeros().scale() > 0) {
            throw new InvalidPodRequestException(where + ": expected a whole number of GPUs, got " + Quote.of(quantity));
        }
        // Checked here, not only on the pod's sum: "1e400" is a whole number no long holds, and the sum of a few
        // counts near the largest long would wrap around to a negative one.
        if (value.compareTo(BigDecimal.valueOf(MAX_GPUS_PER_POD)) > 0) {
            throw new InvalidPodRequestException(where + ": at most " + MAX_GPUS_PER_POD + " GPUs per pod, got " + Quote.of(quantity));
        }
        return value.longValue();
    }

    private static boolean interconnect(String text, List<String> problems) {
        if (text == null) {
            return false;
        }
        return switch (text.strip().toLowerCase(Locale.ROOT)) {
            case "nvlink" -> true;
            case "any", "" -> false;
            default -> {
                problems.add(HetgpuKeys.POD_INTERCONNECT + ": expected \"nvlink\" or \"any\", got " + Quote.of(text));
                yield false;
            }
        };
    }

    private static <E extends Enum<E>> E choice(Map<String, String> annotations, String key, Class<E> type, E unset, List<String> problems) {
        var text = annotations.get(key);
        if (text == null) {
            return unset;
        }
        var allowed = new ArrayList<String>();
        for (var value : type.getEnumConstants()) {
            if (value == unset) {
                continue;
            }
            var label = value.name().toLowerCase(Locale.ROOT);
            allowed.add(label);
            if (label.equals(text.strip().toLowerCase(Locale.ROOT))) {
                return value;
            }
        }
        problems.add(key + ": expected one of " + String.join(", ", allowed) + ", got " + Quote.of(text));
        return unset;
    }
}
