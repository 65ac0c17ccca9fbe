package io.hetgpu.extender.model;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.tier.CardRequirements;
import io.hetgpu.gpu.tier.CardTier;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A pod's GPU request as its ResourceClaims state it, mapped to what {@link PodRequest} holds (a count and what each card
 * must be), so that every filter and scorer judges a DRA pod as it judges a device-plugin pod.
 *
 * <p>Its claims are those of {@code spec.resourceClaims}: named ({@code resourceClaimName}), or made from a template, then
 * found through {@code status.resourceClaimStatuses}. A request counts GPUs when its DeviceClass or its own selectors name
 * a {@linkplain DraDriver#KNOWN GPU driver} and no other device type: {@code exactly.count} of them
 * ({@code allocationMode: All} as one, the node's own count deciding the rest), none for admin access (it takes no
 * device). A prioritized list ({@code firstAvailable}) is satisfied by any of its subrequests: read as the least of them
 * (the fewest GPUs, any model one of them allows, the least memory), so that no node one of them fits is refused, and the
 * note says so. Requests of several claims add up; what each card must be is what all GPU requests allow between them.
 * A claim whose constraint asks all its GPUs to share a driver's NVLink set attribute ({@code matchAttribute:
 * gpu.hetgpu.io/nvlinkSet4}) asks for NVLink as {@code hetgpu.io/interconnect: nvlink} does, when it holds all the pod's
 * GPUs (a constraint binds one claim's devices only). The order of a prioritized list is a preference, never a
 * priority: the pod's priority is its {@code spec.priority}, as for any pod.
 * A pod asking {@code nvidia.com/gpu} that a DeviceClass serves ({@code spec.extendedResourceName}) is read through that
 * class's selectors, and so is one asking a class's own {@code deviceclass.resource.kubernetes.io/<class>}. Whatever is
 * not read (a selector of another shape, a claim not created yet) is in the note, never a reason to refuse a node.
 *
 * <p>Claims, requests, subrequests and selectors read are bounded by this class's constants, not by the pod.
 */
public final class ClaimRequestReader {

    /** Claims of one pod read (the API allows 32). */
    public static final int MAX_CLAIMS = 32;
    /** Requests of one claim read, and subrequests of one request (the API allows 32 and 8). */
    public static final int MAX_REQUESTS = 32;
    /** Selectors of one request or class read (the API allows 32). */
    public static final int MAX_SELECTORS = 32;
    /** Constraints of one claim read (the API allows 32). */
    public static final int MAX_CONSTRAINTS = 32;

    private ClaimRequestReader() {
    }

    /**
     * What the pod's claims ask.
     *
     * @param gpus     GPUs they ask in all
     * @param cards    what each card must be, {@link CardRequirements#ANY} for nothing
     * @param nvlink   every GPU the pod asks must come from one NVLink set: its one claim of GPUs constrains them all to
     *                 one value of a driver's NVLink set attribute ({@code matchAttribute: gpu.hetgpu.io/nvlinkSet4})
     * @param note     what was not read, or how a prioritized list was read ("" for nothing)
     * @param problems what makes the request unreadable (too many GPUs), naming the field
     */
    public record ClaimRequest(int gpus, CardRequirements cards, boolean nvlink, String note, List<String> problems) {

        public static final ClaimRequest NONE = new ClaimRequest(0, CardRequirements.ANY, false, "", List.of());

        public ClaimRequest {
            problems = List.copyOf(problems);
        }
    }

    /** One GPU request read: how many, and what the cards may be. */
    private record Asked(int count, Set<String> models, long minMemoryMiB, ComputeCapability minCapability, CardTier minTier) {
    }

    /** What one claim asks: its GPU requests, and whether an NVLink constraint covers all of them. */
    private record ClaimAsked(List<Asked> asked, boolean nvlink) {
    }

    /**
     * @param resourceName the GPU resource pods request ({@code nvidia.com/gpu}); {@code limitGpus} of it were read from
     *                     the containers
     */
    public static ClaimRequest read(Pod pod, DraLookup lookup, String resourceName, int limitGpus, CardCatalog catalog) {
        var notes = new ArrayList<String>();
        var problems = new ArrayList<String>();
        var asked = new ArrayList<Asked>();
        // The cards a served extended resource asks: counted in resources.limits already, read here for its class only.
        Asked extended = null;
        var spec = pod.getSpec();
        var namespace = pod.getMetadata() == null || pod.getMetadata().getNamespace() == null ? "default" : pod.getMetadata().getNamespace();
        if (limitGpus > 0) {
            var served = lookup.extendedResourceClass(resourceName);
            if (served != null && served.getSpec() != null) {
                var reading = classReading(served, catalog);
                extended = new Asked(limitGpus, reading.models(), reading.minMemoryMiB(), reading.minCapability(), reading.minTier());
                unread(reading, "DeviceClass " + Quote.of(name(served)), notes);
            }
        }
        implicitClasses(pod, lookup, catalog, asked, notes, problems);
        // GPUs asked besides the claims' (resources.limits, a class's own resource) are bound by no claim's constraint.
        boolean othersAsk = !asked.isEmpty() || extended != null || limitGpus > 0;
        int gpuClaims = 0;
        boolean nvlinkClaim = false;
        var claims = spec == null || spec.getResourceClaims() == null ? List.<io.fabric8.kubernetes.api.model.PodResourceClaim>of()
                : spec.getResourceClaims();
        int seen = 0;
        for (var entry : claims) {
            if (entry == null || entry.getName() == null) {
                continue;
            }
            if (++seen > MAX_CLAIMS) {
                notes.add("claims past the first " + MAX_CLAIMS + " not read");
                break;
            }
            var claimName = claimName(pod, entry);
            var where = "resourceClaims[" + Quote.of(entry.getName()) + "]";
            if (claimName == null) {
                notes.add(where + ": its claim is not created yet");
                continue;
            }
            var claim = lookup.claim(namespace, claimName);
            if (claim == null) {
                notes.add(where + ": claim " + Quote.of(claimName) + " not found");
                continue;
            }
            var read = readClaim(claim, where, lookup, catalog, notes);
            if (!read.asked().isEmpty()) {
                gpuClaims++;
                nvlinkClaim = read.nvlink();
                asked.addAll(read.asked());
            }
        }
        // NVLink binds only the devices of one claim: read as the pod's when that claim asks all of its GPUs.
        boolean nvlink = gpuClaims == 1 && nvlinkClaim && !othersAsk;
        if (nvlinkClaim && !nvlink) {
            notes.add("an NVLink constraint binds one claim's GPUs, not all the pod asks: not read, left to kube-scheduler");
        }
        long total = asked.stream().mapToLong(Asked::count).sum();
        if (extended != null) {
            asked.add(extended);
        }
        if (asked.isEmpty()) {
            return new ClaimRequest(0, CardRequirements.ANY, false, String.join("; ", notes), problems);
        }
        if (total + limitGpus > PodRequestParser.MAX_GPUS_PER_POD) {
            problems.add("spec.resourceClaims: at most " + PodRequestParser.MAX_GPUS_PER_POD + " GPUs per pod, the claims ask "
                    + total + (limitGpus > 0 ? " beside " + limitGpus + " in resources.limits" : ""));
        }
        // What every GPU request allows between them: a model any one of them allows, the least memory, capability and tier.
        var loosest = loosest(asked);
        var cards = new CardRequirements(loosest.models(), loosest.minTier(), Set.of(), loosest.minMemoryMiB(), loosest.minCapability());
        return new ClaimRequest((int) Math.min(total, Integer.MAX_VALUE), cards, nvlink, String.join("; ", notes), problems);
    }

    /** What any of {@code asked} allows: a model one of them allows (any, if one allows any), the least memory, capability and tier. */
    private static Asked loosest(List<Asked> asked) {
        var models = new LinkedHashSet<String>();
        boolean anyModel = false;
        long memory = Long.MAX_VALUE;
        ComputeCapability capability = null;
        CardTier tier = null;
        int least = Integer.MAX_VALUE;
        for (var one : asked) {
            anyModel |= one.models().isEmpty();
            models.addAll(one.models());
            memory = Math.min(memory, one.minMemoryMiB());
            capability = capability == null || capability.isAtLeast(one.minCapability()) ? one.minCapability() : capability;
            tier = tier == null || one.minTier().rank() < tier.rank() ? one.minTier() : tier;
            least = Math.min(least, one.count());
        }
        return new Asked(least, anyModel ? Set.of() : models, memory, capability, tier);
    }

    /** The prefix of the extended resource every DeviceClass without {@code spec.extendedResourceName} serves. */
    public static final String CLASS_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/";

    /**
     * GPUs asked as {@code deviceclass.resource.kubernetes.io/<class>} of a GPU class: the extended resource kube-scheduler
     * serves from a class that names none of its own, counted by the rule for init containers as any resource is.
     */
    private static void implicitClasses(Pod pod, DraLookup lookup, CardCatalog catalog, List<Asked> asked, List<String> notes,
                                        List<String> problems) {
        var spec = pod.getSpec();
        if (spec == null) {
            return;
        }
        var counts = new java.util.LinkedHashMap<String, long[]>();
        var lists = new ArrayList<List<io.fabric8.kubernetes.api.model.Container>>();
        lists.add(spec.getInitContainers() == null ? List.of() : spec.getInitContainers());
        lists.add(spec.getContainers() == null ? List.of() : spec.getContainers());
        for (int list = 0; list < 2; list++) {
            for (var container : lists.get(list)) {
                var limits = container == null || container.getResources() == null ? null : container.getResources().getLimits();
                if (limits == null) {
                    continue;
                }
                for (var entry : limits.entrySet()) {
                    if (!entry.getKey().startsWith(CLASS_RESOURCE_PREFIX) || counts.size() >= MAX_CLAIMS && !counts.containsKey(entry.getKey())) {
                        continue;
                    }
                    long count = wholeCount(entry.getValue());
                    if (count < 0) {
                        problems.add("resources.limits[" + Quote.of(entry.getKey()) + "]: expected a whole number of at most "
                                + PodRequestParser.MAX_GPUS_PER_POD + ", got " + Quote.of(entry.getValue()));
                        continue;
                    }
                    // [0]: app containers and sidecars run together; [1]: the largest other init container runs alone.
                    var sums = counts.computeIfAbsent(entry.getKey(), key -> new long[2]);
                    boolean alongside = list == 1 || "Always".equals(container.getRestartPolicy());
                    if (alongside) {
                        sums[0] += count;
                    } else {
                        sums[1] = Math.max(sums[1], count);
                    }
                }
            }
        }
        for (var entry : counts.entrySet()) {
            var className = entry.getKey().substring(CLASS_RESOURCE_PREFIX.length());
            var deviceClass = lookup.deviceClass(className);
            var where = "resources.limits[" + Quote.of(entry.getKey()) + "]";
            if (deviceClass == null) {
                notes.add(where + ": DeviceClass " + Quote.of(className) + " not found");
                continue;
            }
            var reading = classReading(deviceClass, catalog);
            long count = Math.max(entry.getValue()[0], entry.getValue()[1]);
            if (!reading.namesGpuDriver() || reading.otherType() || count == 0) {
                continue;
            }
            unread(reading, where, notes);
            asked.add(new Asked((int) Math.min(count, PodRequestParser.MAX_GPUS_PER_POD + 1L), reading.models(), reading.minMemoryMiB(),
                    reading.minCapability(), reading.minTier()));
        }
    }

    /** A whole count of devices, or -1 when the quantity is not one (or above any pod's). */
    private static long wholeCount(io.fabric8.kubernetes.api.model.Quantity quantity) {
        try {
            var value = io.fabric8.kubernetes.api.model.Quantity.getAmountInBytes(quantity);
            if (value.signum() < 0 || value.stripTrailingZeros().scale() > 0
                    || value.compareTo(java.math.BigDecimal.valueOf(PodRequestParser.MAX_GPUS_PER_POD)) > 0) {
                return -1;
            }
            return value.longValue();
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /** The claim's name: the pod's own, or the one made from its template as the pod's status names it; null when none yet. */
    private static String claimName(Pod pod, io.fabric8.kubernetes.api.model.PodResourceClaim entry) {
        if (entry.getResourceClaimName() != null && !entry.getResourceClaimName().isEmpty()) {
            return entry.getResourceClaimName();
        }
        var statuses = pod.getStatus() == null ? null : pod.getStatus().getResourceClaimStatuses();
        if (statuses == null) {
            return null;
        }
        int looked = 0;
        for (var status : statuses) {
            if (++looked > MAX_CLAIMS) {
                break;
            }
            if (status != null && entry.getName().equals(status.getName())) {
                var name = status.getResourceClaimName();
                return name == null || name.isEmpty() ? null : name;
            }
        }
        return null;
    }

    private static ClaimAsked readClaim(ResourceClaim claim, String where, DraLookup lookup, CardCatalog catalog, List<String> notes) {
        var devices = claim.getSpec() == null ? null : claim.getSpec().getDevices();
        if (devices == null || devices.getRequests() == null) {
            return new ClaimAsked(List.of(), false);
        }
        var asked = new ArrayList<Asked>();
        // The GPU requests by name, with their subrequests' names: what a constraint must name to bind them all.
        var gpuRequests = new java.util.LinkedHashMap<String, Set<String>>();
        boolean allRead = true;
        int read = 0;
        for (var request : devices.getRequests()) {
            if (++read > MAX_REQUESTS) {
                notes.add(where + ": requests past the first " + MAX_REQUESTS + " not read");
                allRead = false;
                break;
            }
            if (request == null) {
                continue;
            }
            var named = where + ".requests[" + Quote.of(request.getName()) + "]";
            var one = readRequest(request, named, lookup, catalog, notes);
            if (one.isPresent()) {
                asked.add(one.get());
                gpuRequests.put(String.valueOf(request.getName()), subrequestNames(request));
            }
        }
        boolean nvlink = allRead && !asked.isEmpty() && nvlinkConstrained(devices.getConstraints(), gpuRequests, where, notes);
        return new ClaimAsked(asked, nvlink);
    }

    private static Set<String> subrequestNames(DeviceRequest request) {
        var names = new java.util.HashSet<String>();
        if (request.getFirstAvailable() != null) {
            int looked = 0;
            for (var sub : request.getFirstAvailable()) {
                if (++looked > MAX_REQUESTS) {
                    break;
                }
                if (sub != null) {
                    names.add(String.valueOf(sub.getName()));
                }
            }
        }
        return names;
    }

    /**
     * Whether a constraint of the claim asks every one of its GPU requests for devices of one NVLink set: a
     * {@code matchAttribute} naming a known driver's NVLink set attribute, over all the claim's requests (none listed) or
     * naming each GPU request (by its name, or every one of its subrequests by {@code request/subrequest}).
     */
    private static boolean nvlinkConstrained(List<io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint> constraints,
                                             java.util.Map<String, Set<String>> gpuRequests, String where, List<String> notes) {
        if (constraints == null) {
            return false;
        }
        int looked = 0;
        for (var constraint : constraints) {
            if (++looked > MAX_CONSTRAINTS) {
                notes.add(where + ": constraints past the first " + MAX_CONSTRAINTS + " not read");
                return false;
            }
            if (constraint == null || constraint.getMatchAttribute() == null) {
                continue;
            }
            var attribute = constraint.getMatchAttribute();
            boolean nvlinkSet = DraDriver.KNOWN.stream().anyMatch(driver -> driver.nvlinkSetSize(attribute).isPresent());
            if (!nvlinkSet) {
                continue;
            }
            var listed = constraint.getRequests() == null ? List.<String>of() : constraint.getRequests();
            if (listed.isEmpty()) {
                return true;
            }
            if (listed.size() > MAX_REQUESTS * (MAX_REQUESTS + 1)) {
                notes.add(where + ".constraints[" + (looked - 1) + "]: more requests than a claim holds, not read");
                continue;
            }
            var named = new java.util.HashSet<>(listed);
            boolean all = gpuRequests.entrySet().stream().allMatch(request -> named.contains(request.getKey())
                    || !request.getValue().isEmpty() && request.getValue().stream().allMatch(sub -> named.contains(request.getKey() + "/" + sub)));
            if (all) {
                return true;
            }
            // hetgpu's templates for several GPUs bind their bands, not their last alternative: a set preferred, as the
            // extender prefers one for any pod of several GPUs, never required.
            boolean someAlternatives = gpuRequests.entrySet().stream().anyMatch(request -> !named.contains(request.getKey())
                    && request.getValue().stream().anyMatch(sub -> named.contains(request.getKey() + "/" + sub)));
            notes.add(where + ".constraints[" + (looked - 1) + "]: matchAttribute " + Quote.of(attribute) + (someAlternatives
                    ? " binds only some alternatives of the claim's GPU requests: an NVLink set preferred, not required"
                    : " binds only some of the claim's GPU requests: not read, left to kube-scheduler"));
        }
        return false;
    }

    private static java.util.Optional<Asked> readRequest(DeviceRequest request, String where, DraLookup lookup, CardCatalog catalog,
                                                          List<String> notes) {
        var exactly = request.getExactly();
        if (exactly != null) {
            if (Boolean.TRUE.equals(exactly.getAdminAccess())) {
                return java.util.Optional.empty();
            }
            return one(exactly.getDeviceClassName(), exactly.getSelectors(), exactly.getAllocationMode(), exactly.getCount(), where,
                    lookup, catalog, notes);
        }
        var alternatives = request.getFirstAvailable();
        if (alternatives == null || alternatives.isEmpty()) {
            return java.util.Optional.empty();
        }
        var read = new ArrayList<Asked>();
        int looked = 0;
        var subNotes = new ArrayList<String>();
        for (var sub : alternatives) {
            if (++looked > MAX_REQUESTS) {
                break;
            }
            if (sub == null) {
                continue;
            }
            one(sub.getDeviceClassName(), sub.getSelectors(), sub.getAllocationMode(), sub.getCount(),
                    where + ".firstAvailable[" + Quote.of(sub.getName()) + "]", lookup, catalog, subNotes).ifPresent(read::add);
        }
        notes.addAll(subNotes);
        if (read.isEmpty()) {
            return java.util.Optional.empty();
        }
        if (read.size() < Math.min(alternatives.size(), MAX_REQUESTS)) {
            // A subrequest of no GPU satisfies the request without any: no GPU is asked for sure.
            notes.add(where + ": firstAvailable may be met without a GPU; read as none");
            return java.util.Optional.empty();
        }
        // Any subrequest may be the one allocated, so the request admits what any of them admits: for hetgpu's lists of
        // tiers, every tier listed, not only the first.
        var least = loosest(read);
        if (read.size() > 1) {
            notes.add(where + ": firstAvailable read as the least of its " + read.size() + " subrequests (" + least.count() + " GPU"
                    + (least.count() == 1 ? "" : "s") + (least.models().isEmpty() ? ", any model" : ", " + String.join(" or ", least.models()))
                    + (least.minTier().equals(CardRequirements.ANY_TIER) ? "" : ", tier " + least.minTier().rank() + " or newer") + ")");
        }
        return java.util.Optional.of(least);
    }

    /** One request or subrequest: GPUs when its class or selectors name a GPU driver and no other device type. */
    private static java.util.Optional<Asked> one(String className, List<DeviceSelector> selectors, String mode, Long count, String where,
                                                  DraLookup lookup, CardCatalog catalog, List<String> notes) {
        var reading = CelSelectors.Reading.NOTHING;
        if (className != null) {
            var deviceClass = lookup.deviceClass(className);
            if (deviceClass == null) {
                notes.add(where + ": DeviceClass " + Quote.of(className) + " not found");
            } else {
                reading = classReading(deviceClass, catalog);
            }
        }
        reading = reading.and(selectorsReading(selectors, catalog));
        if (!reading.namesGpuDriver() || reading.otherType()) {
            return java.util.Optional.empty();
        }
        unread(reading, where, notes);
        int devices;
        if ("All".equals(mode)) {
            notes.add(where + ": allocationMode All read as 1 GPU");
            devices = 1;
        } else {
            long asked = count == null ? 1 : count;
            if (asked < 1) {
                return java.util.Optional.empty();
            }
            devices = (int) Math.min(asked, PodRequestParser.MAX_GPUS_PER_POD + 1L);
        }
        return java.util.Optional.of(new Asked(devices, reading.models(), reading.minMemoryMiB(), reading.minCapability(), reading.minTier()));
    }

    private static CelSelectors.Reading classReading(DeviceClass deviceClass, CardCatalog catalog) {
        return deviceClass.getSpec() == null ? CelSelectors.Reading.NOTHING : selectorsReading(deviceClass.getSpec().getSelectors(), catalog);
    }

    private static CelSelectors.Reading selectorsReading(List<DeviceSelector> selectors, CardCatalog catalog) {
        var reading = CelSelectors.Reading.NOTHING;
        if (selectors == null) {
            return reading;
        }
        int read = 0;
        for (var selector : selectors) {
            if (selector == null || selector.getCel() == null) {
                continue;
            }
            if (++read > MAX_SELECTORS) {
                break;
            }
            reading = reading.and(CelSelectors.read(selector.getCel().getExpression(), catalog));
        }
        return reading;
    }

    private static void unread(CelSelectors.Reading reading, String where, List<String> notes) {
        if (!reading.unread().isEmpty()) {
            notes.add(where + ": " + String.join(", ", reading.unread()) + " not read, left to kube-scheduler");
        }
    }

    private static String name(DeviceClass deviceClass) {
        return deviceClass.getMetadata() == null ? "" : deviceClass.getMetadata().getName();
    }
}
