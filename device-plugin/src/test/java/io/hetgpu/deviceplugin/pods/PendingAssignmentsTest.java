package io.hetgpu.deviceplugin.pods;

import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Which pending pod kubelet is taken to be allocating for, and which pods are never matched. */
class PendingAssignmentsTest {

    static final String NODE = "dgx-1";
    static final Instant T0 = Instant.parse("2026-11-22T14:05:00Z");

    private final NodeTopology dgx1 = Fixtures.dgx1V100();
    private final PendingAssignments pending = listed(new PendingAssignments(NODE, dgx1.devices().stream().map(d -> d.uuid()).toList()));

    static PendingAssignments listed(PendingAssignments pending) {
        pending.listed();
        return pending;
    }

    @Test
    void theEarliestBoundPodThatRequestsThatManyGpusIsMatched() {
        pending.update(pod("late", 2, List.of(2, 3)));
        pending.update(pod("early", 1, List.of(4, 5)));
        pending.update(pod("earliest-but-one-gpu", 0, List.of(6)));

        assertThat(pending.match(2)).map(PendingAssignment::name).contains("early");
        assertThat(pending.match(1)).map(PendingAssignment::name).contains("earliest-but-one-gpu");
        assertThat(pending.match(3)).isEmpty();
    }

    @Test
    void onceTheHandshakeIsInUseAnAssignmentThatArrivesWhileKubeletAsksIsWaitedFor() throws Exception {
        // Before any assignment was seen (the degraded mode) nothing waits for an assignment once a pod of that size is known.
        pending.update(new BoundPod("ml", "unassigned", "uid-unassigned", NODE, Optional.empty(), List.of(2), false));
        assertThat(pending.awaitMatch(2, java.time.Duration.ofMinutes(1))).isEmpty();
        pending.remove("uid-unassigned");
        pending.update(pod("first", 1, List.of(0, 1)));
        pending.allocateMatch(2);

        var latch = new java.util.concurrent.CountDownLatch(1);
        var waiter = new Thread(() -> {
            latch.countDown();
            assertThat(pending.awaitMatch(2, java.time.Duration.ofMinutes(1))).map(PendingAssignment::name).contains("second");
        });
        var failure = new java.util.concurrent.atomic.AtomicReference<Throwable>();
        waiter.setUncaughtExceptionHandler((thread, e) -> failure.set(e));
        waiter.start();
        latch.await();
        pending.update(pod("second", 2, List.of(2, 3)));
        waiter.join(java.time.Duration.ofSeconds(30).toMillis());
        assertThat(waiter.isAlive()).as("the waiting call returned when the assignment arrived").isFalse();
        assertThat(failure.get()).isNull();
        // With none to come, the wait ends after its patience.
        assertThat(pending.awaitMatch(4, java.time.Duration.ofMillis(50))).isEmpty();
    }

    @Test
    void kubeletsFirstCallsWaitUntilTheNodesPodsAreListed() throws Exception {
        // The plugin registers before its first list of the node's pods arrives.
        var starting = new PendingAssignments(NODE, dgx1.devices().stream().map(d -> d.uuid()).toList());
        var asked = new java.util.concurrent.CountDownLatch(1);
        var answer = new java.util.concurrent.CompletableFuture<java.util.Optional<PendingAssignment>>();
        Thread.ofPlatform().start(() -> {
            asked.countDown();
            answer.complete(starting.awaitMatch(2, java.time.Duration.ZERO));
        });
        asked.await();
        starting.update(pod("listed", 1, List.of(0, 1)));
        assertThat(answer).as("no answer before the list is complete").isNotDone();

        starting.listed();
        assertThat(answer.get(30, java.util.concurrent.TimeUnit.SECONDS)).map(PendingAssignment::name).contains("listed");
    }

    @Test
    void anAllocatedPodIsNotMatchedAgainAndTheNextOneIs() {
        pending.update(pod("first", 1, List.of(0, 1)));
        pending.update(pod("second", 2, List.of(2, 3)));

        assertThat(pending.allocateMatch(2)).map(PendingAssignment::name).contains("first");
        assertThat(pending.match(2)).map(PendingAssignment::name).contains("second");
        // The watch reports the allocated pod again (a status change before its containers start): still allocated.
        pending.update(pod("first", 1, List.of(0, 1)));
        assertThat(pending.match(2)).map(PendingAssignment::name).contains("second");
    }

    @Test
    void containersAreMatchedOneAfterTheOtherWithTheirShareOfTheDevices() {
        pending.update(new BoundPod("ml", "two-containers", "uid-2c", NODE, Optional.of(annotation(NODE, 1, List.of(5, 1, 2))),
                List.of(1, 2), false));

        var first = pending.allocateMatch(1).orElseThrow();
        assertThat(first.nextDevices()).containsExactly(uuid(5));
        assertThat(pending.match(1)).isEmpty();
        var second = pending.allocateMatch(2).orElseThrow();
        assertThat(second.nextDevices()).containsExactly(uuid(1), uuid(2));
        assertThat(pending.pending()).isEmpty();
    }

    @Test
    void podsOfAnotherNodeOrAssignedToAnotherNodeAreNeverMatched() {
        pending.update(new BoundPod("ml", "elsewhere", "uid-e", "dgx-2", Optional.of(annotation("dgx-2", 0, List.of(0))), List.of(1), false));
        pending.update(new BoundPod("ml", "stale", "uid-s", NODE, Optional.of(annotation("dgx-2", 0, List.of(0))), List.of(1), false));

        assertThat(pending.match(1)).isEmpty();
    }

    @Test
    void aPodWhoseContainersKubeletReportedOrThatKubeletListsAsHoldingDevicesIsAllocatedAlready() {
        pending.update(pod("running", 0, List.of(0)));
        pending.update(pod("admitted-before-restart", 1, List.of(1)));
        pending.update(pod("waiting", 2, List.of(2)));

        pending.update(new BoundPod("ml", "running", "uid-running", NODE, Optional.of(annotation(NODE, 0, List.of(0))), List.of(1), true));
        pending.heldByKubelet(Set.of("ml/admitted-before-restart", "other/pod"));

        assertThat(pending.pending()).extracting(PendingAssignment::name).containsExactly("waiting");
        assertThat(pending.match(1)).map(PendingAssignment::name).contains("waiting");
    }

    @Test
    void aDeletedPodIsForgotten() {
        pending.update(pod("gone", 0, List.of(0)));
        pending.remove("uid-gone");
        assertThat(pending.match(1)).isEmpty();
    }

    @Test
    void badAnnotationsAreLoggedOnceWithThePodTheFieldAndTheValueAndIgnored() {
        var logged = new ByteArrayOutputStream();
        var stderr = System.err;
        System.setErr(new PrintStream(logged, true, StandardCharsets.UTF_8)); // slf4j-simple writes to System.err as it is now
        try {
            var unreadable = "{\"node\":\"dgx-1\",\"devices\":[\"GPU-a\"],\"boundAt\":\"yesterday\"}";
            pending.update(new BoundPod("ml", "bad-time", "uid-1", NODE, Optional.of(unreadable), List.of(1), false));
            pending.update(new BoundPod("ml", "bad-time", "uid-1", NODE, Optional.of(unreadable), List.of(1), false));
            pending.update(new BoundPod("ml", "not-json", "uid-2", NODE, Optional.of("GPU-0,GPU-1"), List.of(2), false));
            pending.update(new BoundPod("ml", "unknown-device", "uid-3", NODE,
                    Optional.of(new DeviceAssignmentCodec().encode(new DeviceAssignment(NODE, List.of(uuid(0), "GPU-nope"), T0))), List.of(2), false));
            pending.update(new BoundPod("ml", "too-few", "uid-4", NODE, Optional.of(annotation(NODE, 0, List.of(0))), List.of(2), false));
        } finally {
            System.setErr(stderr);
        }
        var lines = logged.toString(StandardCharsets.UTF_8).lines().toList();

        assertThat(pending.pending()).isEmpty();
        assertThat(lines).filteredOn(l -> l.contains("ml/bad-time")).singleElement().asString()
                .contains("boundAt:", "\"yesterday\"", "hetgpu.io/gpu-devices");
        assertThat(lines).filteredOn(l -> l.contains("ml/not-json")).singleElement().asString().contains("GPU-0,GPU-1");
        assertThat(lines).filteredOn(l -> l.contains("ml/unknown-device")).singleElement().asString()
                .contains("devices[1]: this node has no device \"GPU-nope\"");
        assertThat(lines).filteredOn(l -> l.contains("ml/too-few")).singleElement().asString()
                .contains("devices: 1 device IDs, but the pod's containers request 2 GPUs");
    }

    @Test
    void aPodWhoseAnnotationIsFixedIsFollowed() {
        pending.update(new BoundPod("ml", "fixed", "uid-f", NODE, Optional.of("{"), List.of(1), false));
        pending.update(pod("fixed", 0, List.of(3)));
        assertThat(pending.match(1)).map(PendingAssignment::nextDevices).contains(List.of(uuid(3)));
    }

    /** A pending one-container pod on NODE, bound {@code second} seconds after T0, assigned the GPUs at these positions. */
    BoundPod pod(String name, int second, List<Integer> positions) {
        return new BoundPod("ml", name, "uid-" + name, NODE, Optional.of(annotation(NODE, second, positions)), List.of(positions.size()), false);
    }

    String annotation(String node, int second, List<Integer> positions) {
        return new DeviceAssignmentCodec().encode(new DeviceAssignment(node, positions.stream().map(this::uuid).toList(), T0.plusSeconds(second)));
    }

    String uuid(int position) {
        return dgx1.devices().get(position).uuid();
    }
}
