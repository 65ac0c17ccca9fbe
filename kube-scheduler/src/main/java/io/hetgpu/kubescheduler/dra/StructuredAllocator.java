package io.hetgpu.kubescheduler.dra;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * kube-scheduler's structured-parameters allocator (k8s.io/dynamic-resource-allocation/structured, its stable variant)
 * for one pod's claims on one node: claims one after the other, each claim's requests in order, each device of a request
 * the first one, over the node's pools and their devices in order, that is not in use, matches the class's and the
 * request's selectors and keeps the claim's {@code matchAttribute} constraints; when a later device finds none, the
 * search backs up and tries the next candidate. A {@code firstAvailable} request takes the first alternative with which
 * the whole search succeeds; {@code allocationMode: All} takes every matching device and fails if one is in use. The
 * first complete solution is the allocation.
 *
 * <p>A selector that does not compile, fails on a device or runs over its cost stops the allocation on this node with a
 * reason, as kube-scheduler's does with an error. Bounded by {@link DraLimits}: a search that tries more devices than
 * {@code maxSearchSteps} gives up with a reason (kube-scheduler has no count, only its cycle's deadline).
 *
 * <p>Not modelled: admin access, device taints and tolerations, partitionable devices (counters), binding conditions,
 * consumable capacity, and the claim's configuration (it does not change the choice).
 */
public final class StructuredAllocator {

    private final DeviceSelectors selectors;
    private final DraLimits limits;

    public StructuredAllocator(DeviceSelectors selectors, DraLimits limits) {
        this.selectors = selectors;
        this.limits = limits;
    }

    public StructuredAllocator(DraLimits limits) {
        this(new DeviceSelectors(limits), limits);
    }

    /**
     * Allocates the claims on the node, or says why not.
     *
     * @param allocated devices already allocated to other claims (anywhere: the pool names make them unique)
     * @param classes   DeviceClasses by name
     */
    public AllocationOutcome allocate(String nodeName, List<ResourceSlice> slices, Map<String, DeviceClass> classes,
            Set<DeviceId> allocated, List<Claim> claims) {
        if (claims.size() > limits.maxClaimsPerPod()) {
            return new AllocationOutcome.Unallocatable(claims.size() + " claims, more than the limit of " + limits.maxClaimsPerPod());
        }
        try {
            var search = new Search(nodeName, ResourcePools.gather(nodeName, slices), classes, allocated, claims);
            return search.run();
        } catch (Stop stop) {
            return new AllocationOutcome.Unallocatable(stop.getMessage());
        }
    }

    /** Ends the allocation on this node with a reason; the search's own "no" is a false, not this. */
    private static final class Stop extends RuntimeException {
        Stop(String reason) {
            super(reason, null, false, false);
        }
    }

    /** One request or one alternative of a {@code firstAvailable} request, resolved. */
    private record Want(String requestName, String baseRequest, String subRequest, ExactRequest request, DeviceClass deviceClass,
                        int numDevices, List<Candidate> allDevices) {
    }

    private record Candidate(DeviceId id, Device device) {
    }

    private final class Search {
        private final String nodeName;
        private final List<ResourcePools.Pool> pools;
        private final Map<String, DeviceClass> classes;
        private final Set<DeviceId> allocated;
        private final List<Claim> claims;
        /** Per claim, per request: the alternatives (one for {@code exactly}). */
        private final List<List<List<Want>>> wants = new ArrayList<>();
        private final List<List<ConstraintState>> constraints = new ArrayList<>();
        private final Map<MatchKey, Boolean> matches = new HashMap<>();
        private final Map<DeviceId, DeviceSelectors.Input> inputs = new HashMap<>();
        private final Set<DeviceId> allocating = new HashSet<>();
        private final List<List<ClaimAllocation.Result>> results = new ArrayList<>();
        private long steps;

        Search(String nodeName, List<ResourcePools.Pool> pools, Map<String, DeviceClass> classes, Set<DeviceId> allocated, List<Claim> claims) {
            this.nodeName = nodeName;
            this.pools = pools;
            this.classes = classes;
            this.allocated = allocated;
            this.claims = claims;
        }

        AllocationOutcome run() {
            for (int c = 0; c < claims.size(); c++) {
                prepare(c);
            }
            if (!place(0, 0, 0)) {
                var invalid = pools.stream().filter(p -> p.invalidReason().isPresent()).findFirst();
                if (invalid.isPresent()) {
                    return new AllocationOutcome.Unallocatable("resource pool " + invalid.get() + " is invalid: " + invalid.get().invalidReason().get());
                }
                return new AllocationOutcome.Unallocatable("cannot allocate all claims: " + claimNames());
            }
            var out = new ArrayList<ClaimAllocation>(claims.size());
            for (int c = 0; c < claims.size(); c++) {
                var claimResults = results.get(c);
                var local = claimResults.stream().anyMatch(r -> !reachableFromAll(r.id()));
                out.add(new ClaimAllocation(claims.get(c).namespace(), claims.get(c).name(), claimResults,
                        local ? Optional.of(nodeName) : Optional.empty()));
            }
            return new AllocationOutcome.Allocated(out);
        }

        private String claimNames() {
            return String.join(", ", claims.stream().map(Claim::toString).toList());
        }

        private boolean reachableFromAll(DeviceId id) {
            return pools.stream().anyMatch(p -> p.driver().equals(id.driver()) && p.pool().equals(id.pool()) && !p.nodeLocal());
        }

        private void prepare(int claimIndex) {
            var claim = claims.get(claimIndex);
            // Every request needs a device at least: more requests (or constraints) than a claim may hold devices never fit.
            if (claim.requests().size() > limits.maxDevicesPerClaim() || claim.constraints().size() > limits.maxDevicesPerClaim()) {
                throw new Stop("claim " + claim + ": " + claim.requests().size() + " requests and " + claim.constraints().size()
                        + " constraints, more than the limit of " + limits.maxDevicesPerClaim());
            }
            var claimWants = new ArrayList<List<Want>>();
            long minDevices = 0;
            for (var request : claim.requests()) {
                switch (request) {
                    case DeviceRequest.Exactly exactly -> {
                        var want = resolve(claimIndex, exactly.name(), exactly.name(), "", exactly.request());
                        claimWants.add(List.of(want));
                        minDevices += want.numDevices();
                    }
                    case DeviceRequest.FirstAvailable first -> {
                        if (first.subRequests().isEmpty()) {
                            throw new Stop("claim " + claim + ", request " + Quotes.quote(first.name()) + ": firstAvailable lists no subrequest");
                        }
                        if (first.subRequests().size() > limits.maxSelectorsPerRequest()) {
                            throw new Stop("claim " + claim + ", request " + Quotes.quote(first.name()) + ": " + first.subRequests().size()
                                    + " subrequests, more than the limit of " + limits.maxSelectorsPerRequest());
                        }
                        var alternatives = new ArrayList<Want>();
                        long least = Long.MAX_VALUE;
                        for (var sub : first.subRequests()) {
                            var want = resolve(claimIndex, first.name() + "/" + sub.name(), first.name(), sub.name(), sub.request());
                            alternatives.add(want);
                            least = Math.min(least, want.numDevices());
                        }
                        claimWants.add(List.copyOf(alternatives));
                        minDevices += least;
                    }
                }
            }
            if (minDevices > limits.maxDevicesPerClaim()) {
                throw new Stop("claim " + claim + ": number of requested devices " + minDevices + " exceeds the claim limit of "
                        + limits.maxDevicesPerClaim());
            }
            wants.add(claimWants);
            var states = new ArrayList<ConstraintState>();
            for (var constraint : claim.constraints()) {
                if (constraint.attribute() == null || constraint.attribute().isEmpty()) {
                    throw new Stop("claim " + claim + ": empty constraint (only matchAttribute is modelled)");
                }
                states.add(new ConstraintState(Set.copyOf(constraint.requests()), constraint.attribute()));
            }
            constraints.add(states);
            results.add(new ArrayList<>());
        }

        private Want resolve(int claimIndex, String requestName, String base, String sub, ExactRequest request) {
            var claim = claims.get(claimIndex);
            var where = "claim " + claim + ", request " + Quotes.quote(requestName);
            if (request.deviceClassName() == null || request.deviceClassName().isEmpty()) {
                throw new Stop(where + ": missing device class name");
            }
            var deviceClass = classes.get(request.deviceClassName());
            if (deviceClass == null) {
                throw new Stop(where + ": could not retrieve device class " + Quotes.quote(request.deviceClassName()));
            }
            if (request.selectors().size() > limits.maxSelectorsPerRequest() || deviceClass.selectors().size() > limits.maxSelectorsPerRequest()) {
                throw new Stop(where + ": more selectors than the limit of " + limits.maxSelectorsPerRequest());
            }
            for (int i = 0; i < deviceClass.selectors().size(); i++) {
                var error = selectors.compileError(deviceClass.selectors().get(i));
                if (error.isPresent()) {
                    throw new Stop("class " + Quotes.quote(deviceClass.name()) + ": selector #" + i + ": " + error.get());
                }
            }
            for (int i = 0; i < request.selectors().size(); i++) {
                var error = selectors.compileError(request.selectors().get(i));
                if (error.isPresent()) {
                    throw new Stop("claim " + claim + ": selector #" + i + ": " + error.get());
                }
            }
            var partial = new Want(requestName, base, sub, request, deviceClass, 0, List.of());
            return switch (request.mode()) {
                case EXACT_COUNT -> {
                    if (request.count() < 1 || request.count() > limits.maxDevicesPerClaim()) {
                        throw new Stop(where + ": count " + request.count() + " outside 1.." + limits.maxDevicesPerClaim());
                    }
                    yield new Want(requestName, base, sub, request, deviceClass, (int) request.count(), List.of());
                }
                case ALL -> {
                    var all = new ArrayList<Candidate>();
                    for (var pool : pools) {
                        if (pool.incomplete()) {
                            throw new Stop(where + ": asks for all devices, but resource pool " + pool + " is currently being updated");
                        }
                        if (pool.invalidReason().isPresent()) {
                            throw new Stop(where + ": asks for all devices, but resource pool " + pool + " is currently invalid");
                        }
                        for (var device : pool.devices()) {
                            var candidate = new Candidate(new DeviceId(pool.driver(), pool.pool(), device.name()), device);
                            if (selectable(claimIndex, partial, candidate)) {
                                all.add(candidate);
                            }
                        }
                    }
                    yield new Want(requestName, base, sub, request, deviceClass, all.size(), List.copyOf(all));
                }
            };
        }

        /**
         * Places device {@code device} of request {@code request} of claim {@code claim}, and everything after it: true
         * once all claims are allocated, false when no choice from here on works.
         */
        private boolean place(int claim, int request, int device) {
            if (claim >= claims.size()) {
                return true;
            }
            var claimWants = wants.get(claim);
            if (request >= claimWants.size()) {
                return place(claim + 1, 0, 0);
            }
            var alternatives = claimWants.get(request);
            if (device == 0 && alternatives.size() > 1) {
                for (int a = 0; a < alternatives.size(); a++) {
                    if (placeDevices(claim, request, a, 0)) {
                        return true;
                    }
                }
                return false;
            }
            return placeDevices(claim, request, 0, device);
        }

        private boolean placeDevices(int claim, int request, int alternative, int device) {
            var want = wants.get(claim).get(request).get(alternative);
            if (want.request().mode() == AllocationMode.ALL && want.allDevices().isEmpty()) {
                return false;
            }
            if (device >= want.numDevices()) {
                return place(claim, request + 1, 0);
            }
            if (results.get(claim).size() + want.numDevices() - device > limits.maxDevicesPerClaim()) {
                return false;
            }
            if (want.request().mode() == AllocationMode.ALL) {
                var candidate = want.allDevices().get(device);
                if (!take(claim, want, candidate, true)) {
                    return false;
                }
                if (placeDevices(claim, request, alternative, device + 1)) {
                    return true;
                }
                release(claim, want, candidate);
                return false;
            }
            for (var pool : pools) {
                if (pool.incomplete() || pool.invalidReason().isPresent()) {
                    continue;
                }
                for (var d : pool.devices()) {
                    var candidate = new Candidate(new DeviceId(pool.driver(), pool.pool(), d.name()), d);
                    if (inUse(candidate.id()) || !selectable(claim, want, candidate)) {
                        continue;
                    }
                    if (!take(claim, want, candidate, false)) {
                        continue;
                    }
                    if (placeDevices(claim, request, alternative, device + 1)) {
                        return true;
                    }
                    release(claim, want, candidate);
                }
            }
            return false;
        }

        private boolean inUse(DeviceId id) {
            return allocated.contains(id) || allocating.contains(id);
        }

        /** Marks the device as allocated to the request if it is free and keeps the claim's constraints. */
        private boolean take(int claim, Want want, Candidate candidate, boolean must) {
            if (++steps > limits.maxSearchSteps()) {
                throw new Stop("search bound of " + limits.maxSearchSteps() + " devices tried reached for " + claimNames());
            }
            if (inUse(candidate.id())) {
                return false;
            }
            var states = constraints.get(claim);
            for (int i = 0; i < states.size(); i++) {
                if (!states.get(i).add(want, candidate)) {
                    for (int j = 0; j < i; j++) {
                        states.get(j).remove(want);
                    }
                    if (must) {
                        throw new Stop("claim " + claims.get(claim) + ", request " + Quotes.quote(want.requestName()) + ": cannot add device "
                                + candidate.id() + " because a claim constraint would not be satisfied");
                    }
                    return false;
                }
            }
            allocating.add(candidate.id());
            results.get(claim).add(new ClaimAllocation.Result(want.requestName(), candidate.id().driver(), candidate.id().pool(),
                    candidate.id().device()));
            return true;
        }

        private void release(int claim, Want want, Candidate candidate) {
            for (var state : constraints.get(claim)) {
                state.remove(want);
            }
            allocating.remove(candidate.id());
            var claimResults = results.get(claim);
            claimResults.remove(claimResults.size() - 1);
        }

        /** Whether the device satisfies the class's selectors and then the request's, remembered per request. */
        private boolean selectable(int claim, Want want, Candidate candidate) {
            var key = new MatchKey(candidate.id(), want.requestName(), claim);
            var known = matches.get(key);
            if (known != null) {
                return known;
            }
            var result = allMatch(want.deviceClass().selectors(), candidate, "class " + Quotes.quote(want.deviceClass().name()))
                    && allMatch(want.request().selectors(), candidate, "claim " + claims.get(claim));
            matches.put(key, result);
            return result;
        }

        private boolean allMatch(List<String> expressions, Candidate candidate, String owner) {
            for (int i = 0; i < expressions.size(); i++) {
                var input = inputs.computeIfAbsent(candidate.id(), id -> DeviceSelectors.input(id.driver(), candidate.device()));
                switch (selectors.evaluate(expressions.get(i), input)) {
                    case DeviceSelectors.Outcome.Matches m -> {
                        if (!m.value()) {
                            return false;
                        }
                    }
                    case DeviceSelectors.Outcome.Failed f ->
                            throw new Stop(owner + ": selector #" + i + " on device " + candidate.id() + ": " + f.reason());
                }
            }
            return true;
        }
    }

    private record MatchKey(DeviceId device, String request, int claim) {
    }

    /**
     * A {@code matchAttribute} constraint while the search runs: the value the first device set, and how many devices
     * hold it. Constraints are monotonic, so a device that breaks one is never part of a solution with those before it.
     */
    private static final class ConstraintState {
        private final Set<String> requests;
        private final String attribute;
        private DeviceAttribute value;
        private int count;

        ConstraintState(Set<String> requests, String attribute) {
            this.requests = requests;
            this.attribute = attribute;
        }

        private boolean applies(Want want) {
            return requests.isEmpty() || requests.contains(want.baseRequest())
                    || (!want.subRequest().isEmpty() && requests.contains(want.requestName()));
        }

        boolean add(Want want, Candidate candidate) {
            if (!applies(want)) {
                return true;
            }
            var found = lookup(candidate);
            if (found == null) {
                return false;
            }
            if (count == 0) {
                value = found;
                count = 1;
                return true;
            }
            if (!sameValue(found, value)) {
                return false;
            }
            count++;
            return true;
        }

        void remove(Want want) {
            if (applies(want)) {
                count--;
            }
        }

        /** The attribute by its full name, or by its id when its domain is the device's driver. */
        private DeviceAttribute lookup(Candidate candidate) {
            var attributes = candidate.device().attributes();
            var direct = attributes.get(attribute);
            if (direct != null) {
                return direct;
            }
            var slash = attribute.indexOf('/');
            if (slash < 0 || !attribute.substring(0, slash).equals(candidate.id().driver())) {
                return null;
            }
            return attributes.get(attribute.substring(slash + 1));
        }

        /** Same kind and same value; versions compare as strings, which semver's minimal form makes exact. */
        private static boolean sameValue(DeviceAttribute a, DeviceAttribute b) {
            return a.equals(b);
        }
    }
}
