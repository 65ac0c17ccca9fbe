package io.hetgpu.testcluster.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.deviceplugin.devices.ContainerEdits;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.ExtenderCallException;
import io.hetgpu.testcluster.scheduler.ExtenderClient;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import io.hetgpu.testcluster.scheduler.SchedulerSettings;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bind handshake under stress, over real Unix sockets (kubelet and device plugin) and HTTP (the extender): every
 * container gets exactly the GPUs the extender recorded on its pod ({@code hetgpu.io/gpu-devices}), through churn on a
 * node with two kinds of card, a burst of concurrent binds to one node, a kubelet restart between bind and admission,
 * and a device plugin restart mid-burst.
 */
class BindHandshakeStressTest {

    private static final DeviceAssignmentCodec CODEC = new DeviceAssignmentCodec();

    @TempDir
    Path dir;

    private TestCluster cluster;
    private SchedulerSettings settings;
    private final HttpClient http = HttpClient.newHttpClient();

    private void start(NodeSpec... nodes) throws Exception {
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        cluster = TestCluster.start(List.of(nodes), dir, message -> { });
        var extender = cluster.startExtender(configuration.extender());
        settings = configuration.schedulerCalling(extender);
        assertThat(settings.extenders().getFirst().bindVerb()).as("manifests/ configure the bind verb").isNotEmpty();
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private TrainingPods pods() {
        return new TrainingPods(cluster.client());
    }

    /** The devices the extender recorded on the pod, in order. */
    private static List<String> recorded(Pod pod) throws InventoryFormatException {
        var annotations = pod.getMetadata().getAnnotations();
        assertThat(annotations).as("annotations of %s", pod.getMetadata().getName()).containsKey(HetgpuKeys.POD_GPU_DEVICES);
        return CODEC.decode(annotations.get(HetgpuKeys.POD_GPU_DEVICES)).devices();
    }

    /** What the pod's container sees: the plugin's NVIDIA_VISIBLE_DEVICES. */
    private List<String> visible(Pod pod, String node) {
        var env = cluster.kubelet(node).containerEnv(TrainingPods.NS + "/" + pod.getMetadata().getName()).get("main");
        assertThat(env).as("environment of %s", pod.getMetadata().getName()).isNotNull();
        return List.of(env.get(ContainerEdits.VISIBLE_DEVICES).split(","));
    }

    /** The pod runs, kubelet gave it exactly the recorded devices, and its container sees them in the recorded order. */
    private Pod assertGotItsRecord(String name, String node) throws InventoryFormatException {
        var pod = pods().awaitRunning(name);
        var recorded = recorded(pod);
        assertThat(TrainingPods.devices(pod)).as("kubelet's devices for %s", name).containsExactlyInAnyOrderElementsOf(recorded);
        assertThat(visible(pod, node)).as("NVIDIA_VISIBLE_DEVICES of %s", name).isEqualTo(recorded);
        return pod;
    }

    private String modelOf(String node, String uuid) {
        var topology = cluster.gpus(node).topology();
        return topology.device(topology.positionOf(uuid).orElseThrow()).model();
    }

    /** A kind of pod the mixed node sees: its GPU count, its annotations, and the models it may get. */
    private record Kind(String name, int gpus, Map<String, String> annotations, List<String> models) {
    }

    @Test
    void onTheMixedNodeEveryPodGetsTheCardsTheExtenderChoseThroughHundredsOfCreationsAndDeletions() throws Exception {
        start(NodeSpec.gpu("mixed-1", "rack-a", "zone-1", "mixed"));
        var scheduler = new SchedulerDriver(cluster.client(), settings, http, 7);
        var kinds = List.of(
                new Kind("a100", 1, Map.of(HetgpuKeys.POD_GPU_MODELS, "A100"), List.of("A100")),
                new Kind("t4", 1, Map.of(HetgpuKeys.POD_GPU_MODELS, "T4"), List.of("T4")),
                new Kind("big", 1, Map.of(HetgpuKeys.POD_MIN_GPU_MEMORY, "32Gi"), List.of("A100")),
                new Kind("nvlink", 2, Map.of(HetgpuKeys.POD_INTERCONNECT, "nvlink"), List.of("A100")),
                new Kind("any", 1, Map.of(), List.of("A100", "T4")));
        var random = new Random(42);
        var running = new ArrayList<String>();
        int created = 0;
        int followed = 0;
        while (created < 300) {
            var kind = kinds.get(random.nextInt(kinds.size()));
            var name = "p" + created + "-" + kind.name();
            pods().submit(name, kind.gpus(), 1000, kind.annotations());
            created++;
            // Where the pod does not fit, running pods finish one by one until it does. Once none is left, the node's
            // free list (the device plugin's, read from kubelet) may still show the last ones' devices for a moment.
            while (!(scheduler.scheduleRound().getFirst() instanceof Decision.Bound)) {
                if (running.isEmpty()) {
                    await(name + " fits the empty node once its free list catches up").atMost(Duration.ofSeconds(30))
                            .pollInterval(Duration.ofMillis(50)).until(() -> scheduler.scheduleRound().getFirst() instanceof Decision.Bound);
                    break;
                }
                finish(running.remove(random.nextInt(running.size())));
            }
            var pod = assertGotItsRecord(name, "mixed-1");
            for (var uuid : recorded(pod)) {
                assertThat(modelOf("mixed-1", uuid)).as("the card %s got", name).isIn(kind.models());
            }
            followed++;
            running.add(name);
            if (random.nextInt(3) == 0) {
                finish(running.remove(random.nextInt(running.size())));
            }
        }
        assertThat(followed).isEqualTo(created);
    }

    @Test
    void withoutTheBindVerbThePluginStillGivesEachPodACardItAccepts() throws Exception {
        // The degraded mode: kube-scheduler binds, no record; the plugin reads the pending pod's card requirements.
        start(NodeSpec.gpu("mixed-1", "rack-a", "zone-1", "mixed"));
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        var degraded = new SchedulerDriver(cluster.client(),
                configuration.schedulerCalling(cluster.extenders().getFirst(), e -> e.withoutBindVerb()), http, 11);
        pods().submit("needs-memory", 1, 1000, Map.of(HetgpuKeys.POD_MIN_GPU_MEMORY, "32Gi"));
        assertThat(degraded.scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);
        pods().submit("t4-only", 1, 1000, Map.of(HetgpuKeys.POD_GPU_MODELS, "T4"));
        assertThat(degraded.scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);

        var big = pods().awaitRunning("needs-memory");
        assertThat(big.getMetadata().getAnnotations()).doesNotContainKey(HetgpuKeys.POD_GPU_DEVICES);
        // Told only a count, the plugin would keep the NVLink-joined A100 pair whole and give a 15 GB T4.
        assertThat(modelOf("mixed-1", TrainingPods.devices(big).getFirst())).isEqualTo("A100");
        assertThat(modelOf("mixed-1", TrainingPods.devices(pods().awaitRunning("t4-only")).getFirst())).isEqualTo("T4");
    }

    /** The pod ends and is deleted; returns once the extender has seen it go. */
    private void finish(String name) {
        var pod = cluster.client().pods().inNamespace(TrainingPods.NS).withName(name);
        // The API server gives each pod a UID of its own: the one to wait for is the one it holds. A deleted pod stays in
        // the view, released, until the device plugin's free list shows its GPUs free.
        var uid = pod.get().getMetadata().getUid();
        pod.delete();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> cluster.extenders().stream()
                .allMatch(extender -> extender.view().boundPods("mixed-1").stream().noneMatch(p -> p.uid().equals(uid) && !p.released())));
    }

    @Test
    void aBurstOfFiftyConcurrentBindsToOneNodeNeverGivesOneGpuToTwoPods() throws Exception {
        start(NodeSpec.gpu("dgx-1", "rack-a", "zone-1", "dgx-a100"));
        var extender = new ExtenderClient(settings.extenders().getFirst(), http);
        var names = IntStream.range(0, 50).mapToObj(i -> "burst-%02d".formatted(i)).toList();
        for (var name : names) {
            pods().submit(name, 1, 1000, Map.of());
        }
        var unbound = new ArrayList<>(names);
        var holders = new ConcurrentHashMap<String, String>(); // device -> live pod that holds it
        var ran = new HashSet<String>();
        var pool = Executors.newFixedThreadPool(16);
        try {
            while (!unbound.isEmpty()) {
                // kube-scheduler binds asynchronously: every pod still unbound is bound to the node at once.
                var binds = new HashMap<String, Future<String>>();
                for (var name : unbound) {
                    var pod = cluster.client().pods().inNamespace(TrainingPods.NS).withName(name).get();
                    binds.put(name, pool.submit(() -> bindError(extender, pod)));
                }
                var bound = new ArrayList<String>();
                for (var bind : binds.entrySet()) {
                    if (bind.getValue().get().isEmpty()) {
                        bound.add(bind.getKey());
                    }
                }
                assertThat(bound).as("binds that got devices in one wave").isNotEmpty().hasSizeLessThanOrEqualTo(8);
                for (var name : bound) {
                    Pod pod;
                    try {
                        pod = assertGotItsRecord(name, "dgx-1");
                    } catch (AssertionError | RuntimeException e) {
                        throw new AssertionError(name + " of wave " + bound + ": " + e.getMessage() + "\n" + picture("dgx-1"), e);
                    }
                    for (var device : recorded(pod)) {
                        assertThat(holders.putIfAbsent(device, name)).as("holder of %s when %s got it", device, name).isNull();
                    }
                }
                unbound.removeAll(bound);
                ran.addAll(bound);
                // Half of them finish before the next wave, so that freed and still-held devices mix.
                for (var name : bound.subList(0, (bound.size() + 1) / 2)) {
                    cluster.client().pods().inNamespace(TrainingPods.NS).withName(name).delete();
                    holders.values().removeIf(name::equals);
                }
                awaitExtenderSees("dgx-1", ran.size() - (int) holders.values().stream().distinct().count());
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(ran).hasSize(50);
    }

    /** What kubelet, the API server and the extender hold for the node, to read a failure by. */
    private String picture(String node) {
        var text = new StringBuilder("kubelet: ").append(cluster.kubelet(node).allocations()).append('\n');
        for (var pod : cluster.client().pods().inNamespace(TrainingPods.NS).list().getItems()) {
            text.append("pod ").append(pod.getMetadata().getName()).append(' ').append(pod.getMetadata().getUid()).append(' ')
                    .append(pod.getStatus().getPhase()).append(' ').append(pod.getMetadata().getAnnotations()).append('\n');
        }
        text.append("extender: ").append(cluster.extenders().getFirst().view().boundPods(node)).append('\n');
        return text.append("free list: ").append(cluster.client().nodes().withName(node).get().getMetadata().getAnnotations()
                .get(HetgpuKeys.ANNOTATION_FREE)).toString();
    }

    private static String bindError(ExtenderClient extender, Pod pod) throws ExtenderCallException {
        return extender.bind(pod, "dgx-1");
    }

    /** Waits until the extender's view shows {@code released} of the node's pods released. */
    private void awaitExtenderSees(String node, int released) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> cluster.extenders().stream().allMatch(extender ->
                extender.view().boundPods(node).stream().filter(p -> p.released()).count() >= released));
    }

    @Test
    void aKubeletRestartBetweenBindAndAdmissionLosesNothing() throws Exception {
        start(NodeSpec.gpu("dgx-1", "rack-a", "zone-1", "dgx-a100"));
        var scheduler = new SchedulerDriver(cluster.client(), settings, http, 3);
        pods().submit("before-0", 2, 1000, Map.of());
        pods().submit("before-1", 1, 1000, Map.of());
        assertThat(scheduler.scheduleRound()).allMatch(Decision.Bound.class::isInstance).hasSize(2);
        var before = Map.of("before-0", TrainingPods.devices(assertGotItsRecord("before-0", "dgx-1")),
                "before-1", TrainingPods.devices(assertGotItsRecord("before-1", "dgx-1")));

        var kubelet = cluster.kubelet("dgx-1");
        var during = List.of("during-0", "during-1", "during-2", "during-3");
        kubelet.restart(() -> {
            pods().submit("during-0", 1, 1000, Map.of());
            pods().submit("during-1", 1, 1000, Map.of());
            pods().submit("during-2", 2, 1000, Map.of());
            pods().submit("during-3", 1, 1000, Map.of());
            assertThat(scheduler.scheduleRound()).allMatch(Decision.Bound.class::isInstance).hasSize(4);
        });

        var taken = new HashSet<String>();
        for (var name : during) {
            assertThat(taken.addAll(recorded(assertGotItsRecord(name, "dgx-1")))).isTrue();
        }
        before.forEach((name, devices) -> {
            assertThat(TrainingPods.devices(cluster.client().pods().inNamespace(TrainingPods.NS).withName(name).get()))
                    .as("%s after the restart", name).isEqualTo(devices);
            assertThat(taken).doesNotContainAnyElementsOf(devices);
        });
        assertThat(kubelet.registrations()).as("the plugin registered again").hasSize(2);
    }

    @Test
    void thePluginRestartedMidBurstPicksUpWhereItWas() throws Exception {
        start(NodeSpec.gpu("dgx-1", "rack-a", "zone-1", "dgx-a100"));
        var scheduler = new SchedulerDriver(cluster.client(), settings, http, 5);
        for (int i = 0; i < 2; i++) {
            pods().submit("early-" + i, 1, 1000, Map.of());
        }
        assertThat(scheduler.scheduleRound()).allMatch(Decision.Bound.class::isInstance).hasSize(2);
        var taken = new HashSet<String>();
        for (int i = 0; i < 2; i++) {
            taken.addAll(recorded(assertGotItsRecord("early-" + i, "dgx-1")));
        }

        // Bound, recorded, not yet admitted when the plugin restarts: the new plugin finds their records.
        var kubelet = cluster.kubelet("dgx-1");
        kubelet.holdAdmissions();
        var late = List.of("late-0", "late-1", "late-2", "late-3");
        pods().submit("late-0", 1, 1000, Map.of());
        pods().submit("late-1", 2, 1000, Map.of());
        pods().submit("late-2", 1, 1000, Map.of());
        pods().submit("late-3", 1, 1000, Map.of());
        assertThat(scheduler.scheduleRound()).allMatch(Decision.Bound.class::isInstance).hasSize(4);
        int registered = kubelet.registrations().size();
        cluster.restartPlugin("dgx-1");
        await().atMost(Duration.ofSeconds(10)).until(() -> kubelet.registrations().size() > registered);
        kubelet.resumeAdmissions();

        for (var name : late) {
            assertThat(taken.addAll(recorded(assertGotItsRecord(name, "dgx-1")))).as("%s shares no GPU", name).isTrue();
        }
        // And the burst goes on through the new plugin.
        pods().submit("after", 1, 1000, Map.of());
        assertThat(scheduler.scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);
        assertThat(taken.addAll(recorded(assertGotItsRecord("after", "dgx-1")))).isTrue();
        assertThat(taken).as("all eight GPUs, each given once").hasSize(8);
    }
}
