package io.hetgpu.extender.service;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.SnapshotClusterView;
import io.hetgpu.extender.http.ExtenderArgsReader;
import io.hetgpu.extender.http.PreemptionCodec;
import io.hetgpu.extender.http.WireWriter;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.HighPriorityReserve;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.extender.throughput.LearningSettings;
import io.hetgpu.extender.throughput.ThroughputLearner;
import io.hetgpu.extender.throughput.ThroughputSource;
import io.hetgpu.extender.throughput.WorkSample;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.ExtenderPreemptionArgs;
import io.hetgpu.extender.wire.ExtenderPreemptionArgs.MetaPod;
import io.hetgpu.extender.wire.ExtenderPreemptionArgs.MetaVictims;
import io.hetgpu.extender.wire.WireNode;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.tier.CardCatalog;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The service with its caches answers exactly as the service that recomputes everything, byte for byte on the
 * wire, while nodes come, go and change, pods are bound and deleted, and kube-scheduler's three verbs arrive in
 * both node forms with the same pods again and again (as kube-scheduler sends one pod to filter, then
 * prioritize). This is what makes the caches safe to change.
 */
class CacheEquivalenceTest {

    private static final int STEPS = 400;
    private static final CardCatalog CATALOG = CardCatalog.defaults();
    private static final List<Function<String, NodeTopology>> MACHINES = List.of(TestTopologies::dgx1V100, TestTopologies::dgxA100,
            TestTopologies::dgxH100, TestTopologies::t4x4, TestTopologies::k80x4, name -> TestTopologies.v100Pcie(name, 4));

    private final WireWriter writer = new WireWriter();
    private final PreemptionCodec codec = new PreemptionCodec();

    /** One service under test: its own node-state factory, so that nothing derived is shared between the two. */
    private record Side(ExtenderService service, Preemption preemption) {

        static Side of(SnapshotClusterView cluster, PlacementPolicy policy, boolean cached) {
            var parser = new PodRequestParser("nvidia.com/gpu", CATALOG);
            var nodes = new NodeStateFactory(CATALOG, "topology.hetgpu.io/rack");
            var service = cached ? new ExtenderService(cluster, parser, nodes, policy, (pod, table) -> { })
                    : ExtenderService.uncached(cluster, parser, nodes, policy);
            return new Side(service, new Preemption(cluster, parser, nodes, policy, service::closedTier,
                    java.time.Clock.fixed(TestTopologies.READ_AT.plusSeconds(3600), java.time.ZoneOffset.UTC), advice -> { }));
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3})
    void theCachedServiceAnswersAsTheUncachedOne(long seed) {
        var random = new Random(seed);
        var throughputs = new WorkloadThroughputs(Map.of("resnet50", Map.of("K80", 1.81, "V100", 17.99, "T4", 6.0, "A100", 40.0)));
        // Odd seeds with a high-priority reserve and a speed floor: the headroom counter and closed tiers take part.
        var policy = seed % 2 == 1
                ? new PlacementPolicy(PolicySettings.DEFAULTS.withThroughputs(throughputs.withMinimumShare(0.2)).withReserve(new HighPriorityReserve(8)))
                : new PlacementPolicy(PolicySettings.DEFAULTS);
        var cluster = new Cluster(random);
        var view = new SnapshotClusterView(cluster.snapshot::get);
        var cached = Side.of(view, policy, true);
        var uncached = Side.of(view, policy, false);
        var pods = pods();

        for (int step = 0; step < STEPS; step++) {
            if (random.nextInt(10) < 3) {
                cluster.change(step);
            }
            var pod = pods.get(random.nextInt(pods.size()));
            var args = random.nextInt(10) < 7 ? new ExtenderArgs(pod, null, cluster.names(random))
                    : new ExtenderArgs(pod, cluster.wireNodes(random), null);
            var what = "seed " + seed + ", step " + step + ", pod " + pod.getMetadata().getName()
                    + (args.nodes() == null ? ", NodeNames " + args.nodeNames() : ", " + args.nodes().size() + " Nodes");
            assertThat(filter(cached, args)).as("filter, %s", what).isEqualTo(filter(uncached, args));
            if (random.nextInt(10) < 8) {
                assertThat(prioritize(cached, args)).as("prioritize, %s", what).isEqualTo(prioritize(uncached, args));
            }
            if (random.nextInt(10) < 2) {
                var preempt = cluster.preemption(pod, random);
                assertThat(preempt(cached, preempt)).as("preempt, %s", what).isEqualTo(preempt(uncached, preempt));
            }
        }
        assertThat(cached.service().lastHeadroom()).isEqualTo(uncached.service().lastHeadroom());
        assertThat(cached.service().heldByReserve()).isEqualTo(uncached.service().heldByReserve());
    }

    /**
     * The learned speed table changes between requests (pods of two classes end on random cards at random speeds) while
     * the policy reads it through its source: a memo judged by an older table is never served, so the cached service
     * still answers as the uncached one, speed floor and exploration included.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {9, 10})
    void aLearnedTableThatChangesLeavesNoMemoStale(long seed) {
        var random = new Random(seed);
        var configured = new WorkloadThroughputs(Map.of("resnet50", Map.of("K80", 1.81, "V100", 17.99)), 0.3);
        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        var policy = new PlacementPolicy(PolicySettings.DEFAULTS.withThroughputs(configured), ThroughputSource.learning(learner, configured));
        var cluster = new Cluster(random);
        var view = new SnapshotClusterView(cluster.snapshot::get);
        var cached = Side.of(view, policy, true);
        var uncached = Side.of(view, policy, false);
        var pods = pods();
        for (int priority : new int[] {1000, 0, -1}) {
            var learned = KubeJson.trainingPod();
            learned.getMetadata().setName("bert" + priority);
            learned.getSpec().setPriority(priority);
            learned.getMetadata().getAnnotations().put("hetgpu.io/workload", "bert");
            pods.add(learned);
        }
        var cards = List.of("K80", "V100", "T4", "A100", "H100");
        long versions = 0;
        for (int step = 0; step < STEPS; step++) {
            if (random.nextInt(10) < 3) {
                cluster.change(step);
            }
            if (random.nextInt(10) < 2) {
                var card = cards.get(random.nextInt(cards.size()));
                var before = learner.table().version();
                learner.observe(new WorkSample("bert", "ns" + random.nextInt(3), card, 1, 600, 600 * Math.exp(4 * random.nextDouble()),
                        java.time.Instant.EPOCH));
                versions += learner.table().version() == before ? 0 : 1;
            }
            var pod = pods.get(random.nextInt(pods.size()));
            var args = random.nextInt(10) < 7 ? new ExtenderArgs(pod, null, cluster.names(random))
                    : new ExtenderArgs(pod, cluster.wireNodes(random), null);
            var what = "seed " + seed + ", step " + step + ", pod " + pod.getMetadata().getName();
            assertThat(filter(cached, args)).as("filter, %s", what).isEqualTo(filter(uncached, args));
            assertThat(prioritize(cached, args)).as("prioritize, %s", what).isEqualTo(prioritize(uncached, args));
        }
        assertThat(versions).as("tables learned during the run").isGreaterThan(10);
    }

    /**
     * Two callers at once (kube-scheduler's filter and prioritize of different pods, or a second scheduler) while the
     * cluster changes under them: whatever the cache keeps from those races, once the cluster stands still the cached
     * service answers every pod and every node as the uncached one.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {4, 5})
    void twoCallersAtOnceWhileTheClusterChangesLeaveNothingStale(long seed) throws Exception {
        var random = new Random(seed);
        var policy = new PlacementPolicy(PolicySettings.DEFAULTS);
        var cluster = new Cluster(random);
        var view = new SnapshotClusterView(cluster.snapshot::get);
        var cached = Side.of(view, policy, true);
        var pods = pods();
        var done = new java.util.concurrent.atomic.AtomicBoolean();
        var answered = new java.util.concurrent.atomic.AtomicInteger();
        var callers = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            var calls = new ArrayList<java.util.concurrent.Future<?>>();
            for (int c = 0; c < 2; c++) {
                var own = new Random(seed * 31 + c);
                var reader = new ExtenderArgsReader(ExtenderArgsReader.kubernetesMapper());
                calls.add(callers.submit(() -> {
                    while (!done.get()) {
                        var pod = pods.get(own.nextInt(pods.size()));
                        var all = cluster.snapshot.get();
                        var names = new ArrayList<String>();
                        for (int i = 0; i < all.size(); i++) {
                            names.add(all.facts(i).name());
                        }
                        // As kube-scheduler sends them, read from the wire: a filter, then a prioritize of the names it kept.
                        var filtered = cached.service().filter(reader.read(body(pod, names)));
                        writer.filterResult(filtered);
                        prioritize(cached, reader.read(body(pod, filtered.nodeNames() == null ? List.of() : filtered.nodeNames())));
                        answered.incrementAndGet();
                    }
                    return null;
                }));
            }
            for (int step = 0; step < STEPS; step++) {
                cluster.change(step);
                // Each change lands between calls in flight: the next waits until a caller has answered since this one.
                int before = answered.get();
                while (answered.get() == before && calls.stream().noneMatch(java.util.concurrent.Future::isDone)) {
                    Thread.onSpinWait();
                }
            }
            done.set(true);
            for (var call : calls) {
                call.get(30, java.util.concurrent.TimeUnit.SECONDS);
            }
            assertThat(answered.get()).as("calls answered while the cluster changed").isGreaterThanOrEqualTo(STEPS);
        } finally {
            callers.shutdownNow();
        }

        var uncached = Side.of(view, policy, false);
        var all = cluster.snapshot.get();
        var names = new ArrayList<String>();
        for (int i = 0; i < all.size(); i++) {
            names.add(all.facts(i).name());
        }
        for (var pod : pods) {
            var args = new ExtenderArgs(pod, null, names);
            assertThat(filter(cached, args)).as("filter of %s after the burst", pod.getMetadata().getName()).isEqualTo(filter(uncached, args));
            assertThat(prioritize(cached, args)).as("prioritize of %s after the burst", pod.getMetadata().getName()).isEqualTo(prioritize(uncached, args));
        }
    }

    /**
     * kube-scheduler's own sequence, read from the wire as the server reads it: a filter, then a prioritize of the names
     * the filter kept, in its order. Now and then the cluster changes in between, another pod's filter comes in between,
     * or a name is dropped or the order changes (kube-scheduler's other extenders filter too). The cache looks for the
     * prioritize's nodes where the filter found them; wherever that guess is wrong, the answer must not show it.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {6, 7, 8})
    void aPrioritizeOfTheNodesTheFilterKeptAnswersAsTheUncachedOne(long seed) throws Exception {
        var random = new Random(seed);
        var policy = new PlacementPolicy(PolicySettings.DEFAULTS);
        var cluster = new Cluster(random);
        var view = new SnapshotClusterView(cluster.snapshot::get);
        var cached = Side.of(view, policy, true);
        var uncached = Side.of(view, policy, false);
        var pods = pods();
        var reader = new ExtenderArgsReader(ExtenderArgsReader.kubernetesMapper());
        int asFiltered = 0;

        for (int step = 0; step < STEPS; step++) {
            if (random.nextInt(10) < 3) {
                cluster.change(step);
            }
            var pod = pods.get(random.nextInt(pods.size()));
            var filterArgs = reader.read(body(pod, cluster.names(random)));
            var filtered = cached.service().filter(filterArgs);
            var what = "seed " + seed + ", step " + step + ", pod " + pod.getMetadata().getName();
            assertThat(writer.filterResult(filtered).toString(StandardCharsets.UTF_8)).as("filter, %s", what)
                    .isEqualTo(filter(uncached, filterArgs));
            var kept = new ArrayList<>(filtered.nodeNames());
            switch (random.nextInt(6)) {
                case 0 -> cluster.change(step);
                case 1 -> {
                    var other = reader.read(body(pods.get(random.nextInt(pods.size())), cluster.names(random)));
                    assertThat(filter(cached, other)).as("filter in between, %s", what).isEqualTo(filter(uncached, other));
                }
                case 2 -> {
                    if (!kept.isEmpty()) {
                        kept.remove(random.nextInt(kept.size()));
                    }
                }
                case 3 -> Collections.shuffle(kept, random);
                default -> asFiltered++;
            }
            var prioritizeArgs = reader.read(body(pod, kept));
            assertThat(prioritize(cached, prioritizeArgs)).as("prioritize of %s, %s", kept, what).isEqualTo(prioritize(uncached, prioritizeArgs));
        }
        assertThat(asFiltered).as("prioritize calls of exactly the names the filter kept").isGreaterThan(STEPS / 4);
    }

    /**
     * Writes the request bodies. One for the class: a new mapper introspects fabric8's Pod model afresh at its first
     * write, which made the body, not the service, most of these tests' time.
     */
    private static final ObjectMapper BODY_WRITER = ExtenderArgsReader.kubernetesMapper();

    /** A NodeNames request's body as kube-scheduler writes it. */
    private static byte[] body(Pod pod, List<String> names) throws Exception {
        return ("{\"Pod\":" + BODY_WRITER.writeValueAsString(pod) + ",\"Nodes\":null,\"NodeNames\":" + BODY_WRITER.writeValueAsString(names) + "}")
                .getBytes(StandardCharsets.UTF_8);
    }

    private String filter(Side side, ExtenderArgs args) {
        return writer.filterResult(side.service().filter(args)).toString(StandardCharsets.UTF_8);
    }

    private String prioritize(Side side, ExtenderArgs args) {
        var answer = side.service().prioritize(args);
        return (answer.error().isEmpty() ? writer.hostPriorities(answer.priorities()) : writer.error(answer.error())).toString(StandardCharsets.UTF_8);
    }

    private String preempt(Side side, ExtenderPreemptionArgs args) {
        return new String(codec.write(side.preemption().answer(args)), StandardCharsets.UTF_8);
    }

    /** The pods kube-scheduler keeps sending: the same objects again, as the request reader hands them out. */
    private static List<Pod> pods() {
        var pods = new ArrayList<Pod>();
        for (int gpus : new int[] {1, 2, 4, 8}) {
            for (int priority : new int[] {1000, 0, -1}) {
                var pod = KubeJson.trainingPod();
                pod.getMetadata().setName("p" + gpus + "-" + priority);
                pod.getSpec().setPriority(priority);
                var resources = pod.getSpec().getContainers().getFirst().getResources();
                resources.getLimits().put("nvidia.com/gpu", new Quantity(Integer.toString(gpus)));
                resources.getRequests().put("nvidia.com/gpu", new Quantity(Integer.toString(gpus)));
                pods.add(pod);
            }
        }
        var workload = KubeJson.trainingPod();
        workload.getMetadata().setName("resnet");
        workload.getMetadata().getAnnotations().put("hetgpu.io/workload", "resnet50");
        pods.add(workload);
        var cpuOnly = KubeJson.trainingPod();
        cpuOnly.getMetadata().setName("cpu");
        cpuOnly.getSpec().getContainers().getFirst().getResources().getLimits().remove("nvidia.com/gpu");
        cpuOnly.getSpec().getContainers().getFirst().getResources().getRequests().remove("nvidia.com/gpu");
        pods.add(cpuOnly);
        var invalid = KubeJson.trainingPod();
        invalid.getMetadata().setName("invalid");
        invalid.getSpec().getContainers().getFirst().getResources().getLimits().put("nvidia.com/gpu", new Quantity("1.5"));
        pods.add(invalid);
        return pods;
    }

    /** The cluster the informers would show: nodes of several machines, free lists and bound pods that change. */
    private static final class Cluster {
        private final Random random;
        private final AtomicReference<NodeSnapshot> snapshot = new AtomicReference<>(NodeSnapshot.EMPTY);
        private final Map<String, NodeTopology> machines = new LinkedHashMap<>();
        private final Map<String, List<BoundPod>> bound = new HashMap<>();
        private int created;

        Cluster(Random random) {
            this.random = random;
            for (int i = 0; i < 8; i++) {
                add(0);
            }
            snapshot.set(snapshot.get().withNode(new NodeFacts("cpu-0", "1", Map.of(), null, null)));
        }

        void change(int step) {
            var names = new ArrayList<>(machines.keySet());
            var name = names.get(random.nextInt(names.size()));
            switch (random.nextInt(6)) {
                case 0 -> add(step);
                case 1 -> {
                    if (machines.size() > 2) {
                        machines.remove(name);
                        bound.remove(name);
                        snapshot.set(snapshot.get().withoutNode(name));
                    }
                }
                case 2 -> publish(name, step);
                case 3 -> {
                    // A pod bound since the free list was read: the extender predicts its devices.
                    var pods = new ArrayList<>(bound.getOrDefault(name, List.of()));
                    pods.add(new BoundPod(name + "-pod-" + step, 1 + random.nextInt(4), random.nextBoolean(),
                            TestTopologies.READ_AT.plusSeconds(step + 1)));
                    bound.put(name, List.copyOf(pods));
                    snapshot.set(snapshot.get().withBoundPods(name, bound.get(name)));
                }
                case 4 -> {
                    bound.remove(name);
                    snapshot.set(snapshot.get().withBoundPods(name, List.of()));
                }
                default -> {
                    // The same node again as a new object with the same content (an informer resync).
                    var facts = snapshot.get().facts(name);
                    snapshot.set(snapshot.get().withNode(new NodeFacts(facts.name(), facts.resourceVersion(), facts.labels(),
                            facts.inventory(), facts.free())));
                }
            }
        }

        private void add(int step) {
            var name = "gpu-" + created++;
            machines.put(name, MACHINES.get(random.nextInt(MACHINES.size())).apply(name));
            publish(name, step);
        }

        /** A new free list for the node: some of its GPUs taken. */
        private void publish(String name, int step) {
            var topology = machines.get(name);
            var free = new ArrayList<Integer>();
            for (int i = 0; i < topology.devices().size(); i++) {
                if (random.nextInt(3) > 0) {
                    free.add(i);
                }
            }
            var facts = new NodeFacts(name, Integer.toString(step + 1), Map.of("topology.hetgpu.io/rack", "rack-" + random.nextInt(3)),
                    TestTopologies.inventory(topology), TestTopologies.free(topology, free.stream().mapToInt(Integer::intValue).toArray()));
            snapshot.set(snapshot.get().withNode(facts));
        }

        /** Some of the cluster's nodes, in a random order, now and then one named twice, an unknown one or "". */
        List<String> names(Random random) {
            var names = new ArrayList<String>();
            var all = snapshot.get();
            for (int i = 0; i < all.size(); i++) {
                if (random.nextInt(4) > 0) {
                    names.add(all.facts(i).name());
                }
            }
            java.util.Collections.shuffle(names, random);
            if (!names.isEmpty() && random.nextInt(10) == 0) {
                names.add(names.getFirst());
            }
            if (random.nextInt(10) == 0) {
                names.add("ghost");
            }
            if (random.nextInt(20) == 0) {
                names.add("");
            }
            return names;
        }

        /** The same as whole Node objects (a nodeCacheCapable: false extender). */
        List<WireNode> wireNodes(Random random) {
            var nodes = new ArrayList<WireNode>();
            for (var name : names(random)) {
                var facts = name.equals("ghost") || name.isEmpty() ? new NodeFacts(name, "", Map.of(), null, null) : snapshot.get().facts(name);
                var body = ("{\"metadata\":{\"name\":\"" + name + "\"}}").getBytes(StandardCharsets.UTF_8);
                nodes.add(new WireNode(facts, body, 0, body.length));
            }
            return nodes;
        }

        /** kube-scheduler's victims by UID: on some nodes, some of the pods bound there. */
        ExtenderPreemptionArgs preemption(Pod pod, Random random) {
            var victims = new LinkedHashMap<String, MetaVictims>();
            for (var entry : bound.entrySet().stream().sorted(Map.Entry.comparingByKey()).toList()) {
                var uids = entry.getValue().stream().filter(p -> random.nextBoolean()).map(p -> new MetaPod(p.uid())).toList();
                victims.put(entry.getKey(), new MetaVictims(uids, random.nextInt(2)));
            }
            return new ExtenderPreemptionArgs(pod, null, victims);
        }
    }
}
