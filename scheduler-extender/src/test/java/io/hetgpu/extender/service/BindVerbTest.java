package io.hetgpu.extender.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.extender.BindingApiServer;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.cluster.ApiServerPodBinder;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.PodBinder;
import io.hetgpu.extender.cluster.SnapshotClusterView;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.HighPriorityReserve.ClosedTier;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.wire.ExtenderBindingArgs;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.profile.SimulatedGpuSource;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The bind verb against an API server that serves pods/binding: record first, then the Binding; never one GPU twice. */
class BindVerbTest {

    private static final CardCatalog CATALOG = CardCatalog.defaults();
    private final BindingApiServer api = BindingApiServer.start();
    private final List<BindVerb.Report> reports = new CopyOnWriteArrayList<>();
    private final List<String> calls = new CopyOnWriteArrayList<>();
    private final DeviceAssignmentCodec codec = new DeviceAssignmentCodec();

    @AfterEach
    void stop() {
        api.close();
    }

    private static NodeTopology mixed(String node) throws Exception {
        return SimulatedGpuSource.open("mixed", node).topology();
    }

    /** The verb over one node whose free list shows every GPU free, bound pods never shown (the informer lags behind). */
    private BindVerb verb(String node, NodeTopology topology, UnaryOperator<PodBinder> race) {
        return verb(node, topology, race, List.of(), BindVerb.Limits.DEFAULTS, Clock.systemUTC());
    }

    /** The verb over one node whose view shows {@code shown} on it (bound pods, binds in flight), within {@code limits}. */
    private BindVerb verb(String node, NodeTopology topology, UnaryOperator<PodBinder> race, List<BoundPod> shown,
                          BindVerb.Limits limits, Clock clock) {
        var facts = new NodeFacts(node, "1", Map.of(), TestTopologies.inventory(topology), TestTopologies.allFree(topology));
        var snapshot = NodeSnapshot.of(List.of(facts), Map.of(node, shown));
        var binder = race.apply(new ApiServerPodBinder(api.client()));
        var recording = new PodBinder() {
            @Override
            public io.fabric8.kubernetes.api.model.Pod pod(String namespace, String name) throws Refusal {
                return binder.pod(namespace, name);
            }

            @Override
            public void annotate(String namespace, String name, String resourceVersion, String key, String value) throws Refusal {
                calls.add("annotate " + name);
                binder.annotate(namespace, name, resourceVersion, key, value);
            }

            @Override
            public void removeAnnotation(String namespace, String name, String key, String value) throws Refusal {
                calls.add("remove " + name);
                binder.removeAnnotation(namespace, name, key, value);
            }

            @Override
            public void bind(String namespace, String name, String uid, String target) throws Refusal {
                calls.add("bind " + name);
                binder.bind(namespace, name, uid, target);
            }
        };
        return new BindVerb(new SnapshotClusterView(() -> snapshot), new PodRequestParser("nvidia.com/gpu", CATALOG),
                new NodeStateFactory(CATALOG, "rack", "nvidia.com/gpu", NodeStateFactory.recordLifetime(limits.httpTimeout()), clock),
                new PlacementPolicy(PolicySettings.DEFAULTS), pod -> ClosedTier.NONE, recording, clock, reports::add, limits);
    }

    private String create(String name, int gpus, Map<String, String> annotations) {
        return create(name, gpus, annotations, "hetgpu-scheduler");
    }

    private String create(String name, int gpus, Map<String, String> annotations, String schedulerName) {
        var pod = api.client().pods().inNamespace("default").resource(new PodBuilder()
                .withNewMetadata().withName(name).withNamespace("default").withAnnotations(annotations).endMetadata()
                .withNewSpec().withSchedulerName(schedulerName).addNewContainer().withName("main").withImage("train")
                .withNewResources().addToLimits(gpus == 0 ? Map.of() : Map.of("nvidia.com/gpu", new Quantity(Integer.toString(gpus))))
                .endResources().endContainer().endSpec().build()).create();
        return pod.getMetadata().getUid();
    }

    private io.fabric8.kubernetes.api.model.Pod read(String name) {
        return api.client().pods().inNamespace("default").withName(name).get();
    }

    private DeviceAssignment recordOf(String name) throws Exception {
        var text = read(name).getMetadata().getAnnotations().get(HetgpuKeys.POD_GPU_DEVICES);
        return text == null ? null : codec.decode(text);
    }

    private static ExtenderBindingArgs args(String pod, String uid, String node) {
        return new ExtenderBindingArgs(pod, "default", uid, node);
    }

    @Test
    void recordsTheDevicesOnThePodThenBindsIt() throws Exception {
        var topology = mixed("mixed-1");
        var verb = verb("mixed-1", topology, binder -> binder);
        var uid = create("infer", 1, Map.of(HetgpuKeys.POD_GPU_MODELS, "T4"));

        var result = verb.bind(args("infer", uid, "mixed-1"));

        assertThat(result.error()).isEmpty();
        assertThat(calls).containsExactly("annotate infer", "bind infer");
        assertThat(read("infer").getSpec().getNodeName()).isEqualTo("mixed-1");
        var record = recordOf("infer");
        assertThat(record.node()).isEqualTo("mixed-1");
        assertThat(record.devices()).singleElement().satisfies(device ->
                assertThat(topology.device(topology.positionOf(device).orElseThrow()).product()).isEqualTo("Tesla T4"));
        assertThat(reports).extracting(BindVerb.Report::outcome).containsExactly(BindVerb.Outcome.BOUND);
    }

    @Test
    void honoursTheCardRequirementsOnAMixedNode() throws Exception {
        var topology = mixed("mixed-1");
        var verb = verb("mixed-1", topology, binder -> binder);
        var pair = create("train", 2, Map.of(HetgpuKeys.POD_GPU_MODELS, "A100", HetgpuKeys.POD_INTERCONNECT, "nvlink"));
        var t4 = create("infer", 1, Map.of(HetgpuKeys.POD_GPU_MODELS, "T4"));
        var big = create("big", 1, Map.of(HetgpuKeys.POD_MIN_GPU_MEMORY, "40Gi"));

        assertThat(verb.bind(args("train", pair, "mixed-1")).error()).isEmpty();
        assertThat(verb.bind(args("infer", t4, "mixed-1")).error()).isEmpty();
        // Both A100s are taken (reserved: the view has not shown "train" bound yet); a free T4 does not have 40 GiB.
        var refused = verb.bind(args("big", big, "mixed-1"));

        assertThat(recordOf("train").devices()).containsExactlyInAnyOrder(topology.device(0).uuid(), topology.device(1).uuid());
        assertThat(recordOf("infer").devices()).singleElement().isIn(topology.device(2).uuid(), topology.device(3).uuid());
        assertThat(refused.error()).startsWith("node mixed-1 can no longer take pod default/big: ");
        assertThat(read("big").getSpec().getNodeName()).isNull();
        assertThat(recordOf("big")).isNull();
        assertThat(reports).extracting(BindVerb.Report::outcome)
                .containsExactly(BindVerb.Outcome.BOUND, BindVerb.Outcome.BOUND, BindVerb.Outcome.NO_FIT);
    }

    @Test
    void aPodBoundElsewhereMeanwhileIsAConflictAndKeepsNoRecord() throws Exception {
        var topology = TestTopologies.dgxA100("dgx-1");
        // Another binder wins the race between the record and the Binding.
        var verb = verb("dgx-1", topology, binder -> new Delegating(binder) {
            @Override
            public void bind(String namespace, String name, String uid, String node) throws Refusal {
                binder.bind(namespace, name, uid, "other-node");
                binder.bind(namespace, name, uid, node);
            }
        });
        var uid = create("train", 2, Map.of());

        var result = verb.bind(args("train", uid, "dgx-1"));

        assertThat(result.error()).contains("HTTP 409").contains("already assigned to node \"other-node\"");
        assertThat(read("train").getMetadata().getAnnotations()).doesNotContainKey(HetgpuKeys.POD_GPU_DEVICES);
        assertThat(calls).containsExactly("annotate train", "bind train", "remove train");
        assertThat(verb.reservations().reservedOn("dgx-1")).isZero();
        assertThat(reports).extracting(BindVerb.Report::outcome).containsExactly(BindVerb.Outcome.CONFLICT);
    }

    @Test
    void aPodDeletedBeforeItsBindingIsAConflictAndGivesItsDevicesBack() throws Exception {
        var topology = TestTopologies.dgxA100("dgx-1");
        var verb = verb("dgx-1", topology, binder -> new Delegating(binder) {
            @Override
            public void bind(String namespace, String name, String uid, String node) throws Refusal {
                api.client().pods().inNamespace(namespace).withName(name).delete();
                binder.bind(namespace, name, uid, node);
            }
        });
        var uid = create("train", 8, Map.of());

        var result = verb.bind(args("train", uid, "dgx-1"));

        assertThat(result.error()).contains("HTTP 404");
        assertThat(verb.reservations().reservedOn("dgx-1")).isZero();
        assertThat(reports).extracting(BindVerb.Report::outcome).containsExactly(BindVerb.Outcome.CONFLICT);
    }

    @Test
    void aPodAlreadyGoneOrRecreatedIsNotTouched() throws Exception {
        var verb = verb("dgx-1", TestTopologies.dgxA100("dgx-1"), binder -> binder);
        assertThat(verb.bind(args("never", "u-1", "dgx-1")).error()).isEqualTo("pod default/never not found: deleted before it could be bound");
        var uid = create("train", 1, Map.of());
        assertThat(verb.bind(args("train", "an-older-uid", "dgx-1")).error()).contains("is now UID " + uid + ", not an-older-uid");
        assertThat(calls).isEmpty();
        assertThat(read("train").getSpec().getNodeName()).isNull();
    }

    @Test
    void aPodWithoutGpusIsBoundWithoutARecord() throws Exception {
        var verb = verb("dgx-1", TestTopologies.dgxA100("dgx-1"), binder -> binder);
        var uid = create("web", 0, Map.of());

        assertThat(verb.bind(args("web", uid, "dgx-1")).error()).isEmpty();

        assertThat(read("web").getSpec().getNodeName()).isEqualTo("dgx-1");
        assertThat(read("web").getMetadata().getAnnotations()).doesNotContainKey(HetgpuKeys.POD_GPU_DEVICES);
        assertThat(reports).extracting(BindVerb.Report::outcome).containsExactly(BindVerb.Outcome.BOUND_UNRECORDED);
    }

    @Test
    void emptyArgumentsAreRefusedNamingTheField() {
        var verb = verb("dgx-1", TestTopologies.dgxA100("dgx-1"), binder -> binder);
        assertThat(verb.bind(new ExtenderBindingArgs("train", "default", "u", "")).error())
                .isEqualTo("ExtenderBindingArgs.Node is empty: nothing to bind");
        assertThat(verb.bind(new ExtenderBindingArgs(null, "default", "u", "dgx-1")).error())
                .isEqualTo("ExtenderBindingArgs.PodName is empty: nothing to bind");
    }

    @Test
    void aRequestWithoutTheUidIsRefusedAndChangesNothing() throws Exception {
        var verb = verb("dgx-1", TestTopologies.dgxA100("dgx-1"), binder -> binder);
        create("train", 2, Map.of());

        assertThat(verb.bind(new ExtenderBindingArgs("train", "default", "", "dgx-1")).error())
                .isEqualTo("ExtenderBindingArgs.PodUID is empty: nothing to bind");
        assertThat(verb.bind(new ExtenderBindingArgs("train", "default", null, "dgx-1")).error())
                .isEqualTo("ExtenderBindingArgs.PodUID is empty: nothing to bind");

        assertUntouched("train");
    }

    @Test
    void aPodOfAnotherSchedulerIsRefusedAndChangesNothing() throws Exception {
        var verb = verb("dgx-1", TestTopologies.dgxA100("dgx-1"), binder -> binder);
        var system = create("coredns", 0, Map.of(), "default-scheduler");
        var otherTeam = create("their-train", 2, Map.of(), "team-b-scheduler");

        assertThat(verb.bind(args("coredns", system, "dgx-1")).error()).isEqualTo("pod default/coredns has spec.schedulerName "
                + "\"default-scheduler\", not one of [hetgpu-scheduler] (schedulerNames): not this extender's to bind");
        assertThat(verb.bind(args("their-train", otherTeam, "dgx-1")).error()).contains("\"team-b-scheduler\"");

        assertUntouched("coredns");
        assertUntouched("their-train");
        assertThat(reports).extracting(BindVerb.Report::outcome).containsOnly(BindVerb.Outcome.FAILED);
    }

    @Test
    void theSchedulerNamesAreTheConfiguredOnes() throws Exception {
        var limits = new BindVerb.Limits(java.util.Set.of("team-b-scheduler"), java.time.Duration.ofSeconds(5));
        var verb = verb("dgx-1", TestTopologies.dgxA100("dgx-1"), binder -> binder, List.of(), limits, Clock.systemUTC());
        var theirs = create("their-train", 2, Map.of(), "team-b-scheduler");
        var ours = create("train", 2, Map.of());

        assertThat(verb.bind(args("their-train", theirs, "dgx-1")).error()).isEmpty();
        assertThat(verb.bind(args("train", ours, "dgx-1")).error()).contains("not one of [team-b-scheduler]");
        assertUntouched("train");
    }

    @Test
    void aNodeTheViewDoesNotHoldIsRefusedBeforeAnythingIsWrittenEvenForAPodWithoutGpus() throws Exception {
        var verb = verb("dgx-1", TestTopologies.dgxA100("dgx-1"), binder -> binder);
        var gpu = create("train", 2, Map.of());
        var cpu = create("web", 0, Map.of());

        assertThat(verb.bind(args("train", gpu, "no-such-node")).error())
                .isEqualTo("node no-such-node is not a node the extender's informers hold (no such node, or not seen yet): "
                        + "pod default/train not bound");
        assertThat(verb.bind(args("web", cpu, "no-such-node")).error()).startsWith("node no-such-node ");

        assertUntouched("train");
        assertUntouched("web");
    }

    /** What a held Binding does once let go: fail, or go on to the API server. */
    @FunctionalInterface
    private interface AfterRelease {
        void bind(PodBinder binder, String namespace, String name, String uid, String node) throws PodBinder.Refusal;
    }

    /** Records written at once; every Binding waits for {@code release} (an API server slow to answer it), then {@code then}. */
    private static UnaryOperator<PodBinder> bindingHeldUntil(CountDownLatch release, AfterRelease then) {
        return binder -> new Delegating(binder) {
            @Override
            public void bind(String namespace, String name, String uid, String node) throws Refusal {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                then.bind(binder, namespace, name, uid, node);
            }
        };
    }

    @Test
    void aBindWhoseApiCallsHangAnswersWithinItsBudgetAndLeavesNoRecord() throws Exception {
        var topology = TestTopologies.dgxA100("dgx-1");
        var limits = new BindVerb.Limits(java.util.Set.of("hetgpu-scheduler"), java.time.Duration.ofMillis(1500));
        var release = new CountDownLatch(1);
        // The record is written at once; the Binding hangs (the API server is slow) until the test lets it fail.
        var verb = verb("dgx-1", topology, bindingHeldUntil(release, (binder, namespace, name, uid, node) -> {
            throw new PodBinder.Refusal(503, "binding pod " + namespace + "/" + name + ": HTTP 503 slow");
        }), List.of(), limits, Clock.systemUTC());
        var uid = create("train", 2, Map.of());

        long started = System.nanoTime();
        var result = verb.bind(args("train", uid, "dgx-1"));
        var took = java.time.Duration.ofNanos(System.nanoTime() - started);

        assertThat(took).isLessThan(limits.httpTimeout());
        assertThat(result.error()).startsWith("bind of pod default/train to dgx-1 ran out of time (")
                .contains("binding pod default/train to dgx-1: no answer from the API server in time");
        assertThat(reports).extracting(BindVerb.Report::outcome).containsExactly(BindVerb.Outcome.TIMED_OUT);
        assertThat(recordOf("train")).as("the record stays while the Binding may still land").isNotNull();

        release.countDown();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(recordOf("train")).isNull();
            assertThat(verb.reservations().reservedOn("dgx-1")).isZero();
        });
        assertThat(read("train").getSpec().getNodeName()).isNull();
    }

    @Test
    void aBindThatRanOutOfTimeWhileItsBindingLandedKeepsItsRecord() throws Exception {
        var topology = TestTopologies.dgxA100("dgx-1");
        var limits = new BindVerb.Limits(java.util.Set.of("hetgpu-scheduler"), java.time.Duration.ofMillis(1500));
        var release = new CountDownLatch(1);
        var verb = verb("dgx-1", topology, bindingHeldUntil(release, PodBinder::bind), List.of(), limits, Clock.systemUTC());
        var uid = create("train", 2, Map.of());

        assertThat(verb.bind(args("train", uid, "dgx-1")).error()).contains("ran out of time");
        release.countDown();

        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(read("train").getSpec().getNodeName()).isEqualTo("dgx-1"));
        // The late Binding's pod keeps the record the device plugin needs (the clean-up saw it bound and left it).
        org.awaitility.Awaitility.await().during(java.time.Duration.ofMillis(300)).atMost(java.time.Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(recordOf("train")).isNotNull());
    }

    @Test
    void noWriteStartsOnceTheBudgetIsSpent() throws Exception {
        var limits = new BindVerb.Limits(java.util.Set.of("hetgpu-scheduler"), java.time.Duration.ofMillis(1500));
        var release = new CountDownLatch(1);
        // Reading the pod takes the whole budget: the answer comes too late to act on.
        var verb = verb("dgx-1", TestTopologies.dgxA100("dgx-1"), binder -> new Delegating(binder) {
            @Override
            public io.fabric8.kubernetes.api.model.Pod pod(String namespace, String name) throws Refusal {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return binder.pod(namespace, name);
            }
        }, List.of(), limits, Clock.systemUTC());
        var uid = create("train", 2, Map.of());

        assertThat(verb.bind(args("train", uid, "dgx-1")).error()).contains("reading pod default/train: no answer from the API server in time");
        release.countDown();

        org.awaitility.Awaitility.await().during(java.time.Duration.ofMillis(500)).atMost(java.time.Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(calls).isEmpty());
        assertUntouched("train");
    }

    @Test
    void anUnboundPodsFreshRecordHoldsItsDevicesForEveryProcess() throws Exception {
        var topology = TestTopologies.dgxA100("dgx-1");
        var now = java.time.Instant.parse("2026-01-01T00:00:00Z");
        var clock = Clock.fixed(now, java.time.ZoneOffset.UTC);
        // Another extender (the old scheduler leader) is binding a pod to six GPUs: its record is 3 s old, its Binding not seen.
        var inFlight = BoundPod.binding("their-uid", 6, List.of(0, 1, 2, 3, 4, 5).stream().map(p -> topology.device(p).uuid()).toList(),
                now.minusSeconds(3), 0);
        var verb = verb("dgx-1", topology, binder -> binder, List.of(inFlight), BindVerb.Limits.DEFAULTS, clock);
        var pair = create("pair", 2, Map.of());
        var third = create("third", 1, Map.of());

        assertThat(verb.bind(args("pair", pair, "dgx-1")).error()).isEmpty();
        assertThat(recordOf("pair").devices()).containsExactlyInAnyOrder(topology.device(6).uuid(), topology.device(7).uuid());
        assertThat(verb.bind(args("third", third, "dgx-1")).error()).startsWith("node dgx-1 can no longer take pod default/third: ");
    }

    @Test
    void aStaleRecordOnAnUnboundPodHoldsNothing() throws Exception {
        var topology = TestTopologies.dgxA100("dgx-1");
        var now = java.time.Instant.parse("2026-01-01T00:00:00Z");
        var clock = Clock.fixed(now, java.time.ZoneOffset.UTC);
        // Written longer ago than httpTimeout and the margin: the bind that wrote it ended without binding.
        var stale = BoundPod.binding("their-uid", 8, List.of(0, 1, 2, 3, 4, 5, 6, 7).stream().map(p -> topology.device(p).uuid()).toList(),
                now.minus(NodeStateFactory.recordLifetime(BindVerb.Limits.DEFAULTS.httpTimeout())), 0);
        var verb = verb("dgx-1", topology, binder -> binder, List.of(stale), BindVerb.Limits.DEFAULTS, clock);
        var all = create("all", 8, Map.of());

        assertThat(verb.bind(args("all", all, "dgx-1")).error()).isEmpty();
        assertThat(recordOf("all").devices()).hasSize(8);
    }

    @Test
    void aRetriedPodsOwnLeftoverRecordDoesNotHoldItsDevicesAgainstIt() throws Exception {
        var topology = TestTopologies.dgxA100("dgx-1");
        var now = java.time.Instant.parse("2026-01-01T00:00:00Z");
        var clock = Clock.fixed(now, java.time.ZoneOffset.UTC);
        var uid = create("all", 8, Map.of());
        var leftover = BoundPod.binding(uid, 8, List.of(0, 1, 2, 3, 4, 5, 6, 7).stream().map(p -> topology.device(p).uuid()).toList(),
                now.minusSeconds(1), 0);
        var verb = verb("dgx-1", topology, binder -> binder, List.of(leftover), BindVerb.Limits.DEFAULTS, clock);

        assertThat(verb.bind(args("all", uid, "dgx-1")).error()).isEmpty();
    }

    private void assertUntouched(String name) {
        var pod = read(name);
        assertThat(pod.getSpec().getNodeName()).as("pod %s not bound", name).isNull();
        assertThat(pod.getMetadata().getAnnotations()).as("pod %s has no record", name).doesNotContainKey(HetgpuKeys.POD_GPU_DEVICES);
        assertThat(calls).as("no write for pod %s", name).noneMatch(call -> call.endsWith(" " + name));
    }

    @Test
    void fiftyBindsRacingForOneEightGpuNodeNeverShareAGpu() throws Exception {
        var topology = TestTopologies.dgxA100("dgx-1");
        var verb = verb("dgx-1", topology, binder -> binder);
        var uids = new ArrayList<String>();
        for (int i = 0; i < 50; i++) {
            uids.add(create("burst-" + i, 1, Map.of()));
        }
        var gate = new CountDownLatch(1);
        var pool = Executors.newFixedThreadPool(50);
        try {
            var answers = new ArrayList<Future<String>>();
            for (int i = 0; i < 50; i++) {
                int index = i;
                answers.add(pool.submit(() -> {
                    gate.await();
                    return verb.bind(args("burst-" + index, uids.get(index), "dgx-1")).error();
                }));
            }
            gate.countDown();
            var given = new ArrayList<String>();
            int bound = 0;
            for (int i = 0; i < 50; i++) {
                var error = answers.get(i).get();
                var record = recordOf("burst-" + i);
                if (error.isEmpty()) {
                    bound++;
                    assertThat(read("burst-" + i).getSpec().getNodeName()).isEqualTo("dgx-1");
                    given.addAll(record.devices());
                } else {
                    assertThat(error).startsWith("node dgx-1 can no longer take pod default/burst-" + i + ": ");
                    assertThat(record).as("a refused pod keeps no record").isNull();
                    assertThat(read("burst-" + i).getSpec().getNodeName()).isNull();
                }
            }
            assertThat(bound).isEqualTo(8);
            assertThat(new HashSet<>(given)).hasSize(8);
        } finally {
            pool.shutdownNow();
        }
    }

    /** A binder that passes every call on, for a test to stage a race in one of them. */
    private static class Delegating implements PodBinder {
        private final PodBinder binder;

        Delegating(PodBinder binder) {
            this.binder = binder;
        }

        @Override
        public io.fabric8.kubernetes.api.model.Pod pod(String namespace, String name) throws Refusal {
            return binder.pod(namespace, name);
        }

        @Override
        public void annotate(String namespace, String name, String resourceVersion, String key, String value) throws Refusal {
            binder.annotate(namespace, name, resourceVersion, key, value);
        }

        @Override
        public void removeAnnotation(String namespace, String name, String key, String value) throws Refusal {
            binder.removeAnnotation(namespace, name, key, value);
        }

        @Override
        public void bind(String namespace, String name, String uid, String node) throws Refusal {
            binder.bind(namespace, name, uid, node);
        }
    }
}
