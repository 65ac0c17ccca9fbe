package io.hetgpu.testcluster.draplacement;

import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.kubescheduler.CpuMemory;
import io.hetgpu.kubescheduler.dra.AllocationOutcome;
import io.hetgpu.kubescheduler.dra.Claim;
import io.hetgpu.kubescheduler.dra.ClaimAllocation;
import io.hetgpu.kubescheduler.dra.DeviceAttribute;
import io.hetgpu.kubescheduler.dra.DeviceClass;
import io.hetgpu.kubescheduler.dra.DeviceId;
import io.hetgpu.kubescheduler.dra.DraLimits;
import io.hetgpu.kubescheduler.dra.HetgpuClaims;
import io.hetgpu.kubescheduler.dra.PrioritizedListScore;
import io.hetgpu.kubescheduler.dra.ResourceSlice;
import io.hetgpu.kubescheduler.dra.StructuredAllocator;
import io.hetgpu.kubescheduler.score.DefaultScore;
import io.hetgpu.kubescheduler.selection.HostSelection;
import io.hetgpu.kubescheduler.selection.TieBreak;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.Set;

/**
 * The same pods placed by kube-scheduler's DRA allocator model two ways, with hetgpu's claims ({@link HetgpuClaims}) and
 * with plain first-fit claims: per pod, every node filtered by the allocator (the node is feasible where its claim can
 * be allocated), the feasible nodes scored as kube-scheduler scores them (default scores over cpu and memory, plus the
 * DynamicResources plugin's prioritized-list score from 1.35 on), the best taken, ties at random. A pod no node can take
 * when it arrives is refused (counted, not queued), and each pod frees its devices when its time is up.
 */
public final class DraPlacement {

    /** How a pod's claim is written. */
    public enum Claims {
        /** {@code exactly: {deviceClassName, count}}: any GPUs, the first that fit. */
        PLAIN,
        /** hetgpu's: bands of tiers in the pod's order, one NVLink set preferred for several GPUs (the shipped templates). */
        HETGPU
    }

    /** Which kube-scheduler scores nodes: 1.34 has no DynamicResources Score, 1.35 and later score prioritized lists. */
    public enum Release {
        NO_DRA_SCORE, PRIORITIZED_LIST_SCORE
    }

    /** What each pod asks of cpu and memory per GPU, for the default scores and the fit. */
    static final CpuMemory PER_GPU = CpuMemory.of(8, 64);

    /**
     * The figures of one run.
     *
     * @param highGpus         GPUs given to high-priority pods
     * @param highOnNewest     of those, on the cluster's newest tier
     * @param lowGpus          GPUs given to low-priority pods
     * @param lowOnOldest      of those, on the cluster's oldest tier
     * @param multiGpuClaims   claims of more than one GPU allocated
     * @param multiNvlink      of those, with its GPUs NVLink-connected (one group over NVLink, as an NVLink set is)
     * @param refusedByPriority claims no node could take on arrival, by priority (high, normal, low)
     * @param refusedMultiGpu  of those, claims of more than one GPU
     */
    public record Figures(long placed, long highGpus, long highOnNewest, long lowGpus, long lowOnOldest, long multiGpuClaims,
                          long multiNvlink, long[] refusedByPriority, long refusedMultiGpu) {

        public Figures {
            refusedByPriority = refusedByPriority.clone();
        }

        public long refused() {
            long total = 0;
            for (long r : refusedByPriority) {
                total += r;
            }
            return total;
        }

        public double highOnNewestShare() {
            return share(highOnNewest, highGpus);
        }

        public double lowOnOldestShare() {
            return share(lowOnOldest, lowGpus);
        }

        public double multiNvlinkShare() {
            return share(multiNvlink, multiGpuClaims);
        }

        public Figures plus(Figures other) {
            var refusals = refusedByPriority.clone();
            for (int i = 0; i < refusals.length; i++) {
                refusals[i] += other.refusedByPriority[i];
            }
            return new Figures(placed + other.placed, highGpus + other.highGpus, highOnNewest + other.highOnNewest, lowGpus + other.lowGpus,
                    lowOnOldest + other.lowOnOldest, multiGpuClaims + other.multiGpuClaims, multiNvlink + other.multiNvlink, refusals,
                    refusedMultiGpu + other.refusedMultiGpu);
        }

        static Figures none() {
            return new Figures(0, 0, 0, 0, 0, 0, 0, new long[HetgpuClaims.Priority.values().length], 0);
        }

        private static double share(long part, long whole) {
            return whole == 0 ? 0 : (double) part / whole;
        }
    }

    private final List<DraNodes.Node> nodes;
    private final List<ResourceSlice> slices;
    private final Map<String, DeviceClass> classes;
    private final List<Integer> tiers;
    private final StructuredAllocator allocator;

    public DraPlacement(List<DraNodes.Node> nodes, DraLimits limits) {
        this.nodes = List.copyOf(nodes);
        this.slices = nodes.stream().map(DraNodes.Node::slice).toList();
        this.classes = Map.of(HetgpuClaims.DEVICE_CLASS, HetgpuClaims.deviceClass());
        this.tiers = DraNodes.tiers(nodes);
        this.allocator = new StructuredAllocator(limits);
    }

    private record Running(int end, String node, List<DeviceId> devices, CpuMemory request) {
    }

    /** Places {@code jobs} in arrival order; ties between equal nodes are broken by {@code tieSeed}, alike for every way. */
    public Figures run(List<PlacementJob> jobs, Claims claims, Release release, long tieSeed) {
        if (tiers.isEmpty()) {
            throw new IllegalArgumentException("no GPU node to place on");
        }
        int newest = tiers.get(tiers.size() - 1);
        int oldest = tiers.get(0);
        var ties = TieBreak.random(new Random(tieSeed));
        var allocated = new HashSet<DeviceId>();
        var requested = new HashMap<String, CpuMemory>();
        var ending = new PriorityQueue<Running>((a, b) -> Integer.compare(a.end(), b.end()));
        long placed = 0, highGpus = 0, highOnNewest = 0, lowGpus = 0, lowOnOldest = 0, multi = 0, multiNvlink = 0;
        var refused = new long[HetgpuClaims.Priority.values().length];
        long refusedMulti = 0;
        for (var job : jobs) {
            while (!ending.isEmpty() && ending.peek().end() <= job.arrival()) {
                var done = ending.poll();
                done.devices().forEach(allocated::remove);
                requested.merge(done.node(), done.request(), CpuMemory::minus);
            }
            var name = "job-" + job.id();
            Claim claim = claims == Claims.HETGPU
                    ? HetgpuClaims.claim("default", name, job.priority(), job.gpus())
                    : HetgpuClaims.plain("default", name, job.gpus());
            var request = new CpuMemory(PER_GPU.milliCpu() * job.gpus(), PER_GPU.memory() * job.gpus());
            var chosen = choose(claim, request, allocated, requested, release, ties);
            if (chosen == null) {
                refused[job.priority().ordinal()]++;
                refusedMulti += job.gpus() > 1 ? 1 : 0;
                continue;
            }
            placed++;
            var devices = chosen.allocation().results().stream().map(ClaimAllocation.Result::id).toList();
            allocated.addAll(devices);
            requested.merge(chosen.node().name(), request, CpuMemory::plus);
            ending.add(new Running(job.arrival() + job.duration(), chosen.node().name(), devices, request));
            for (var result : chosen.allocation().results()) {
                int tier = tierOf(chosen.node().attributes(result.device()));
                if (job.priority() == HetgpuClaims.Priority.HIGH) {
                    highGpus++;
                    highOnNewest += tier == newest ? 1 : 0;
                } else if (job.priority() == HetgpuClaims.Priority.LOW) {
                    lowGpus++;
                    lowOnOldest += tier == oldest ? 1 : 0;
                }
            }
            if (job.gpus() > 1) {
                multi++;
                multiNvlink += chosen.node().nvlinkConnected(chosen.allocation().results().stream().map(ClaimAllocation.Result::device).toList()) ? 1 : 0;
            }
        }
        return new Figures(placed, highGpus, highOnNewest, lowGpus, lowOnOldest, multi, multiNvlink, refused, refusedMulti);
    }

    private record Choice(DraNodes.Node node, ClaimAllocation allocation) {
    }

    /** kube-scheduler's cycle for one pod: filter (fit, then the DRA allocator), score, select; null when no node fits. */
    private Choice choose(Claim claim, CpuMemory request, Set<DeviceId> allocated, Map<String, CpuMemory> requested, Release release,
            TieBreak ties) {
        var feasible = new LinkedHashMap<String, ClaimAllocation>();
        var byName = new HashMap<String, DraNodes.Node>();
        var rawDra = new LinkedHashMap<String, Long>();
        for (var node : nodes) {
            var after = requested.getOrDefault(node.name(), CpuMemory.ZERO).plus(request);
            if (!after.fitsIn(node.allocatable())) {
                continue;
            }
            if (allocator.allocate(node.name(), slices, classes, allocated, List.of(claim)) instanceof AllocationOutcome.Allocated done) {
                var allocation = done.claims().get(0);
                feasible.put(node.name(), allocation);
                byName.put(node.name(), node);
                rawDra.put(node.name(), PrioritizedListScore.raw(List.of(claim), done.claims()));
            }
        }
        if (feasible.isEmpty()) {
            return null;
        }
        var selection = new HostSelection<String>(ties);
        if (feasible.size() == 1) {
            // kube-scheduler skips scoring when one node is left.
            selection.offer(feasible.keySet().iterator().next(), 0);
        } else {
            var draScores = release == Release.PRIORITIZED_LIST_SCORE ? PrioritizedListScore.normalized(rawDra) : Map.<String, Long>of();
            for (var name : feasible.keySet()) {
                var node = byName.get(name);
                long score = DefaultScore.score(requested.getOrDefault(name, CpuMemory.ZERO).plus(request), node.allocatable())
                        + draScores.getOrDefault(name, 0L);
                selection.offer(name, score);
            }
        }
        var chosen = selection.chosen();
        return new Choice(byName.get(chosen), feasible.get(chosen));
    }

    private static int tierOf(Map<String, DeviceAttribute> attributes) {
        return attributes.get(HetgpuDra.TIER) instanceof DeviceAttribute.IntValue tier ? (int) tier.value() : 0;
    }

    /** The run over several seeds (the mix's and the ties'), summed. */
    public Figures runSeeds(int seeds, int jobs, int meanDuration, Claims claims, Release release) {
        var total = Figures.none();
        for (int seed = 1; seed <= seeds; seed++) {
            total = total.plus(run(PlacementJob.mix(seed, jobs, meanDuration), claims, release, seed));
        }
        return total;
    }

    /** Every run's figures, as the report lists them. */
    public List<Map.Entry<String, Figures>> compare(int seeds, int jobs, int meanDuration) {
        var out = new ArrayList<Map.Entry<String, Figures>>();
        out.add(Map.entry("plain claims, first fit", runSeeds(seeds, jobs, meanDuration, Claims.PLAIN, Release.PRIORITIZED_LIST_SCORE)));
        out.add(Map.entry("hetgpu's claims, 1.34 (no DRA score)", runSeeds(seeds, jobs, meanDuration, Claims.HETGPU, Release.NO_DRA_SCORE)));
        out.add(Map.entry("hetgpu's claims, 1.35+ (DRA score)", runSeeds(seeds, jobs, meanDuration, Claims.HETGPU, Release.PRIORITIZED_LIST_SCORE)));
        return out;
    }
}
