package io.hetgpu.testcluster.demo;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.Extender;
import io.hetgpu.extender.service.PreemptionChoice;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.kubescheduler.selection.TieBreak;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.report.Eviction;
import io.hetgpu.testcluster.report.NodeView;
import io.hetgpu.testcluster.report.Placement;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.io.IOException;
import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The demo's preemption scene: a DGX A100 and a DGX-1 each run four 2-GPU trials of a low-priority nightly sweep
 * (the A100 trials started first, two hours ago, and checkpointed 5 minutes ago; the V100 trials an hour ago, and
 * checkpointed 50 minutes ago); then an urgent 8-GPU NVLink fine-tuning job arrives. kube-scheduler's DefaultPreemption evicts by its own rules (the trials that
 * started last); with hetgpu's preempt verb the urgent job gets the newest cards and the victims lose the least work.
 */
final class PreemptionScene {

    static final String A100 = "dgx-a100-1";
    static final String V100 = "dgx1-v100-1";
    static final String URGENT = "urgent-finetune";
    private static final int TRIALS = 8;

    /**
     * @param evictions  the pods evicted for the urgent job, where they ran and what they lost
     * @param urgent     where the urgent job runs
     * @param placements every pod once the urgent job runs
     */
    record Outcome(DemoRun.Scheduler scheduler, List<Eviction> evictions, Placement urgent, List<Placement> placements, List<NodeView> nodes) {

        double gpuHoursLost() {
            return evictions.stream().mapToDouble(Eviction::gpuHoursLost).sum();
        }
    }

    private PreemptionScene() {
    }

    static Outcome run(DemoRun.Scheduler scheduler, DeployedConfiguration configuration, long seed, Consumer<String> progress)
            throws IOException, GpuDiscoveryException, InventoryFormatException {
        var nodes = List.of(NodeSpec.gpu(A100, "rack-a", "zone-1", "dgx-a100"), NodeSpec.gpu(V100, "rack-b", "zone-1", "dgx1-v100"));
        return FreshCluster.run(scheduler.title + ", preemption scene", nodes, progress, cluster -> {
            var client = cluster.client();
            var extender = cluster.startExtender(configuration.extender());
            var withHetgpu = configuration.schedulerCalling(extender);
            var http = HttpClient.newHttpClient();
            // The scenery is the same for both schedulers: trials placed one by one, A100 trials first.
            var filler = new SchedulerDriver(client, withHetgpu, http, seed);
            var now = Instant.now();
            for (int i = 0; i < TRIALS; i++) {
                boolean onA100 = i < TRIALS / 2;
                var trial = DemoWorkload.pod(withHetgpu.schedulerName(), "nightly-sweep-" + i, "nightly-sweep", "trial", DemoWorkload.LOW, 2,
                        Map.of(HetgpuKeys.POD_GPU_MODELS, onA100 ? "A100" : "V100",
                                HetgpuKeys.POD_CHECKPOINTED_AT, now.minus(Duration.ofMinutes(onA100 ? 5 : 50)).toString()));
                client.resource(trial).create();
                filler.scheduleRound();
                awaitRunning(client, trial.getMetadata().getName());
                // The trials have run for a while, the A100 ones longest: each started before its checkpoint, which the
                // preempt verb would otherwise count from the start instead (seconds ago in this cluster).
                var started = now.minus(Duration.ofMinutes(onA100 ? 120 : 60)).toString();
                client.pods().inNamespace(trial.getMetadata().getNamespace()).withName(trial.getMetadata().getName())
                        .editStatus(p -> new io.fabric8.kubernetes.api.model.PodBuilder(p).editOrNewStatus().withStartTime(started)
                                .endStatus().build());
            }
            var settings = scheduler == DemoRun.Scheduler.HETGPU ? withHetgpu : configuration.scheduler().withoutExtenders();
            var driver = new SchedulerDriver(client, settings, http, seed).preempting(seed, TieBreak.random(new Random(seed)));
            var reader = new PlacementReader(client, cluster.nodes());
            var before = new HashMap<String, Placement>();
            reader.placements(Map.of()).forEach(p -> before.put(p.pod(), p));
            var trialsByName = new HashMap<String, Pod>();
            client.pods().inNamespace(DemoWorkload.NAMESPACE).list().getItems().forEach(p -> trialsByName.put(p.getMetadata().getName(), p));
            client.resource(DemoWorkload.pod(settings.schedulerName(), URGENT, URGENT, "worker", DemoWorkload.HIGH, 8,
                    Map.of(HetgpuKeys.POD_INTERCONNECT, "nvlink"))).create();
            progress.accept(scheduler.title + ", preemption scene: both servers full; " + URGENT + " (8 GPUs, NVLink, high priority) submitted");
            var evictedAt = Instant.now();
            var evictions = new ArrayList<Eviction>();
            var rounds = new ArrayList<>(driver.scheduleRound());
            // kube-scheduler sees the victims go through its informers, as the extender does; this driver reads the API
            // server directly, so it waits for the extender to have seen them go before it tries the pod again.
            awaitExtenderSawVictimsGo(extender, rounds, trialsByName);
            // A scheduler that refused the nominated node once its victims were gone would preempt again: count those too.
            rounds.addAll(bindOnceVictimsAreGone(driver));
            for (var decision : rounds) {
                if (decision instanceof Decision.Nominated nominated) {
                    for (var victim : nominated.victims()) {
                        var name = victim.substring(victim.indexOf('/') + 1);
                        var was = before.get(name);
                        var pod = trialsByName.get(name);
                        var annotations = Objects.requireNonNullElse(pod.getMetadata().getAnnotations(), Map.<String, String>of());
                        var started = pod.getStatus() == null ? null : pod.getStatus().getStartTime();
                        long lost = PreemptionChoice.gpuSecondsLost(was.gpus().size(), PreemptionChoice.lastSaved(annotations, started, evictedAt), evictedAt);
                        evictions.add(new Eviction(name, was.node(), was.gpus(), lost / 3600.0));
                    }
                }
            }
            awaitRunning(client, URGENT);
            var after = reader.placements(Map.of());
            var urgent = after.stream().filter(p -> p.pod().equals(URGENT)).findFirst().orElseThrow();
            return new Outcome(scheduler, evictions, urgent, after, reader.nodes());
        });
    }

    /** One scheduler's scene in a line or two: whom it evicted, what they lost, where the urgent job runs. */
    static String describe(Outcome scene) {
        var victims = scene.evictions().stream().map(Eviction::pod).toList();
        var nodes = scene.evictions().stream().map(Eviction::node).distinct().toList();
        return String.format(java.util.Locale.ROOT, "  %-21s evicted %s on %s (%.1f GPU-hours since their last checkpoint lost);%n"
                        + "  %-21s %s runs on %s: %d %s%s%n", scene.scheduler().title + ":", String.join(", ", victims), String.join(", ", nodes),
                scene.gpuHoursLost(), "", URGENT, scene.urgent().node(), scene.urgent().gpus().size(), scene.urgent().card(),
                scene.urgent().nvlinkSet() ? ", one NVLink set" : ", NOT one NVLink set");
    }

    /** The picture's comparison table, its first row the header. */
    static List<List<String>> rows(List<Outcome> scenes) {
        var rows = new ArrayList<List<String>>();
        rows.add(List.of("", "pods evicted", "GPU-hours lost", "the urgent job got"));
        for (var scene : scenes) {
            rows.add(List.of(scene.scheduler().title, Integer.toString(scene.evictions().size()),
                    String.format(java.util.Locale.ROOT, "%.1f", scene.gpuHoursLost()),
                    scene.urgent().gpus().size() + " " + scene.urgent().card() + " on " + scene.urgent().node()));
        }
        return rows;
    }

    private static void awaitExtenderSawVictimsGo(Extender extender, List<Decision> decisions, Map<String, Pod> pods) {
        var victims = new ArrayList<String>();
        for (var decision : decisions) {
            if (decision instanceof Decision.Nominated nominated) {
                nominated.victims().forEach(victim -> victims.add(pods.get(victim.substring(victim.indexOf('/') + 1)).getMetadata().getUid()));
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline && stillHeld(extender, victims)) {
            pause();
        }
    }

    private static boolean stillHeld(Extender extender, List<String> uids) {
        for (var node : List.of(A100, V100)) {
            if (extender.view().boundPods(node).stream().anyMatch(pod -> !pod.released() && uids.contains(pod.uid()))) {
                return true;
            }
        }
        return false;
    }

    private static void pause() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the scene waited for the cluster", e);
        }
    }

    /** kube-scheduler retries the nominated pod; it is bound once the kubelet has freed its victims' GPUs. Every round's decisions. */
    private static List<Decision> bindOnceVictimsAreGone(SchedulerDriver driver) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        var decisions = new ArrayList<Decision>();
        while (System.nanoTime() < deadline) {
            var round = driver.scheduleRound();
            decisions.addAll(round);
            if (round.stream().anyMatch(d -> d instanceof Decision.Bound bound && bound.pod().endsWith("/" + URGENT))) {
                return decisions;
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while " + URGENT + " waited for its victims to go", e);
            }
        }
        throw new IllegalStateException(URGENT + " was not bound within 30 s of its victims' eviction");
    }

    private static void awaitRunning(io.fabric8.kubernetes.client.KubernetesClient client, String name) {
        client.pods().inNamespace(DemoWorkload.NAMESPACE).withName(name)
                .waitUntilCondition(p -> p != null && p.getStatus() != null && "Running".equals(p.getStatus().getPhase()), 30, TimeUnit.SECONDS);
    }
}
