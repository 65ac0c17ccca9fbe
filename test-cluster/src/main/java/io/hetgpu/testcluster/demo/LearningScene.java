package io.hetgpu.testcluster.demo;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.extender.Extender;
import io.hetgpu.extender.throughput.CardPriors;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.inventory.FreeDevicesCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.kubelet.PodEnd;
import io.hetgpu.testcluster.kubelet.SpeedTable;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import io.hetgpu.testcluster.throughputs.ThroughputsCommand;
import java.io.IOException;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The demo's learning scene: hetgpu learns how fast a workload class runs on each card from its pods' ends, and places
 * the class by it. Class {@value #CLASS} runs faster on P100 than on V100 here (the scene's {@link SpeedTable}, which
 * the extender is never told), against the card order its priors assume. A high-priority pod of it first goes to the
 * newest tier (V100); a few pods run on each card and end, as their kubelets report them (run time, the job's line
 * {@code hetgpu.io/work: N}); the next goes to P100, saying why with the learned figures; and an extender restarted
 * afterwards reads the table back from its ConfigMap and places the same way. kube-scheduler alone has nothing to learn
 * with, so there is no baseline run.
 */
final class LearningScene {

    static final String V100_NODE = "dgx1-v100-1";
    static final String P100_NODE = "dgx1-p100-1";
    static final String CLASS = "lstm";
    /** Steps per GPU-second: the truth the scene's kubelets end pods by. */
    static final SpeedTable SPEEDS = SpeedTable.of(CLASS, Map.of("V100", 18.0, "P100", 24.0));
    /** Each pod's declared steps: 40 minutes on 2 V100s, 30 on 2 P100s. */
    static final long WORK = 86_400;
    static final int GPUS = 2;
    /** Runs that end on each card before the class is placed again: the learner needs one, a median of three is sturdier. */
    static final int RUNS = 3;

    static final String FIRST = CLASS + "-0";
    static final String AFTER = CLASS + "-after";
    static final String RESTARTED = CLASS + "-after-restart";

    /**
     * @param before      where the first high-priority pod went, nothing learned yet, and the extender's explanation
     * @param runs        the runs that ended, as their kubelets wrote them, in the order they ended
     * @param after       where the same pod went once the runs were learned, and why
     * @param throughputs what {@code ./hetgpu throughputs} printed of the class, read from the ConfigMap after the restart
     * @param restarted   where it went with the extender started afterwards
     */
    record Outcome(Placed before, List<Run> runs, Placed after, String throughputs, Placed restarted) {
    }

    /** A pod of the class, placed: its node and the extender's explanation (its HetgpuPlacement Event). */
    record Placed(String pod, String node, String explanation) {
    }

    /** A run that ended: its pod, node and how its kubelet ended it. */
    record Run(String pod, String node, PodEnd end) {
    }

    private LearningScene() {
    }

    static Outcome run(DeployedConfiguration configuration, long seed, Consumer<String> progress)
            throws IOException, GpuDiscoveryException, InventoryFormatException {
        var nodes = List.of(NodeSpec.gpu(V100_NODE, "rack-a", "zone-1", "dgx1-v100"), NodeSpec.gpu(P100_NODE, "rack-a", "zone-1", "dgx1-p100"));
        var label = DemoRun.Scheduler.HETGPU.title + ", learning scene";
        return FreshCluster.run(label, nodes, progress, cluster -> {
            var client = cluster.client();
            var schedulerName = configuration.scheduler().schedulerName();
            var first = cluster.startExtender(configuration.extender());
            var driver = new SchedulerDriver(client, configuration.schedulerCalling(first), HttpClient.newHttpClient(), seed);

            var before = place(client, driver, schedulerName, FIRST, DemoWorkload.HIGH);
            // Pods of the class run on both cards: high-priority ones on the newest tier, low-priority ones on the oldest
            // that fits (there they may explore a card the class never ran on).
            var names = new ArrayList<String>();
            for (int i = 1; i < RUNS; i++) {
                names.add(submit(client, schedulerName, CLASS + "-" + i, DemoWorkload.HIGH).getMetadata().getName());
            }
            for (int i = 0; i < RUNS; i++) {
                names.add(submit(client, schedulerName, CLASS + "-low-" + i, DemoWorkload.LOW).getMetadata().getName());
            }
            for (var decision : driver.scheduleRound()) {
                if (!(decision instanceof Decision.Bound)) {
                    throw new IllegalStateException("the learning scene's pod was not placed: " + decision);
                }
            }
            names.addFirst(FIRST);
            var runs = new ArrayList<Run>();
            for (var name : names) {
                var node = awaitRunning(client, name).getSpec().getNodeName();
                runs.add(new Run(name, node, cluster.endRun(DemoWorkload.NAMESPACE, name, SPEEDS)));
            }
            awaitLearned(first, runs.size());
            progress.accept(label + ": " + runs.size() + " runs of " + CLASS + " ended and learned");

            awaitEveryGpuFree(first, nodes);
            var after = place(client, driver, schedulerName, AFTER, DemoWorkload.HIGH);
            remove(client, AFTER);

            stop(cluster, first);
            var throughputs = classBlock(ThroughputsCommand.text(client, client.getNamespace() == null ? "default" : client.getNamespace()));
            var second = cluster.startExtender(configuration.extender());
            awaitRestored(second);
            awaitEveryGpuFree(second, nodes);
            var again = new SchedulerDriver(client, configuration.schedulerCalling(second), HttpClient.newHttpClient(), seed);
            var restarted = place(client, again, schedulerName, RESTARTED, DemoWorkload.HIGH);
            return new Outcome(before, runs, after, throughputs, restarted);
        });
    }

    /** The scene in the demo's words. */
    static String describe(Outcome scene) {
        var text = new StringBuilder();
        var v100Runs = scene.runs().stream().filter(run -> run.node().equals(V100_NODE)).toList();
        var p100Runs = scene.runs().stream().filter(run -> run.node().equals(P100_NODE)).toList();
        text.append(String.format(Locale.ROOT, "  %-9s %s (high priority) goes to %s: nothing is learned yet, so cards rank by tier%n", "before:",
                scene.before().pod(), scene.before().node()));
        text.append(String.format(Locale.ROOT, "  %-9s %s%n", "", scene.before().explanation()));
        text.append(String.format(Locale.ROOT, "  %-9s %d runs end on %s (high priority, %s each) and %d on %s (low priority, which may%n", "runs:",
                v100Runs.size(), V100_NODE, durations(v100Runs), p100Runs.size(), P100_NODE, durations(p100Runs)));
        text.append(String.format(Locale.ROOT, "  %-9s take a card the class never ran on; %s each), each job writing \"%s\"%n", "",
                durations(p100Runs), scene.runs().getFirst().end().terminationMessage().strip()));
        text.append(String.format(Locale.ROOT, "  %-9s %s (high priority) goes to %s:%n", "after:", scene.after().pod(), scene.after().node()));
        text.append(String.format(Locale.ROOT, "  %-9s %s%n", "", scene.after().explanation()));
        text.append(String.format(Locale.ROOT, "  %-9s the extender restarts and reads ConfigMap %s back; %s goes to %s.%n", "restart:",
                ThroughputsCommand.CONFIG_MAP, scene.restarted().pod(), scene.restarted().node()));
        text.append(String.format(Locale.ROOT, "  %-9s What it learned, as `./hetgpu throughputs` prints it:%n", ""));
        scene.throughputs().lines().forEach(line -> text.append("    ").append(line).append('\n'));
        return text.toString();
    }

    /** The scene's setting, for the demo to print before it. */
    static String setting() {
        return String.format(Locale.ROOT, """
                Learning a workload's speed: pods of class %s (hetgpu.io/workload: %s), %d GPUs and %,d steps each (hetgpu.io/work),
                on %s (8 V100) and %s (8 P100). Here %s runs at %s steps per GPU-second on P100 and %s on V100; the
                extender is not told, and its priors rank the cards the other way (P100 at %s of a V100). The simulated kubelets
                end each pod after the run time that gives, and the extender learns from what they report.
                """, CLASS, CLASS, GPUS, WORK, V100_NODE, P100_NODE, CLASS, figure("P100"), figure("V100"),
                CardPriors.relativeSpeed("P100").orElse(Double.NaN));
    }

    private static String figure(String card) {
        return String.format(Locale.ROOT, "%.0f", SPEEDS.speed(CLASS, card).orElse(Double.NaN));
    }

    /** "40m33s", or the distinct run times of the runs joined. */
    private static String durations(List<Run> runs) {
        return runs.stream().map(run -> minutes(run.end().run())).distinct().collect(Collectors.joining(", "));
    }

    private static String minutes(Duration run) {
        return run.toMinutes() + "m" + String.format(Locale.ROOT, "%02d", run.toSecondsPart()) + "s";
    }

    /** The class's block of the command's text: its header line to the blank line after its table. */
    static String classBlock(String printed) {
        var lines = printed.lines().toList();
        int start = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(CLASS + " (")) {
                start = i;
                break;
            }
        }
        if (start < 0) {
            return printed;
        }
        int end = start;
        while (end < lines.size() && !lines.get(end).isBlank()) {
            end++;
        }
        return String.join("\n", lines.subList(start, end)) + "\n";
    }

    private static Placed place(KubernetesClient client, SchedulerDriver driver, String schedulerName, String name, int priority) {
        submit(client, schedulerName, name, priority);
        var decisions = driver.scheduleRound();
        if (decisions.size() != 1 || !(decisions.getFirst() instanceof Decision.Bound)) {
            throw new IllegalStateException("the learning scene's pod " + name + " was not placed: " + decisions);
        }
        var node = awaitRunning(client, name).getSpec().getNodeName();
        return new Placed(name, node, explanation(client, name));
    }

    private static Pod submit(KubernetesClient client, String schedulerName, String name, int priority) {
        var pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(DemoWorkload.NAMESPACE)
                .withUid(java.util.UUID.nameUUIDFromBytes(name.getBytes(java.nio.charset.StandardCharsets.UTF_8)).toString())
                .addToLabels(DemoWorkload.APP, CLASS).addToLabels(DemoWorkload.COMPONENT, "trainer")
                .addToAnnotations(HetgpuKeys.POD_WORKLOAD, CLASS).addToAnnotations(HetgpuKeys.POD_WORK, Long.toString(WORK)).endMetadata()
                .withNewSpec().withSchedulerName(schedulerName).withPriority(priority)
                .addNewContainer().withName("main").withImage("pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime")
                .withTerminationMessagePath("/dev/termination-log")
                .withNewResources().addToLimits(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity(Integer.toString(GPUS))).endResources()
                .endContainer().endSpec()
                .withNewStatus().withPhase("Pending").endStatus().build();
        return client.resource(pod).create();
    }

    private static Pod awaitRunning(KubernetesClient client, String name) {
        return client.pods().inNamespace(DemoWorkload.NAMESPACE).withName(name)
                .waitUntilCondition(p -> p != null && p.getStatus() != null && "Running".equals(p.getStatus().getPhase()), 30, TimeUnit.SECONDS);
    }

    /** The extender's latest explanation of the pod (its HetgpuPlacement Event, written as it answers). */
    private static String explanation(KubernetesClient client, String pod) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            var message = client.v1().events().inNamespace(DemoWorkload.NAMESPACE).list().getItems().stream()
                    .filter(e -> "HetgpuPlacement".equals(e.getReason()) && pod.equals(e.getInvolvedObject().getName()))
                    .max(Comparator.comparing(e -> String.valueOf(e.getLastTimestamp()))).map(e -> e.getMessage());
            if (message.isPresent()) {
                return message.get();
            }
            if (System.nanoTime() > deadline) {
                return "(the extender wrote no explanation within 10 s)";
            }
            pause();
        }
    }

    /** The extender has learned {@code runs} runs (it reads each pod's end on a thread of its own). */
    private static void awaitLearned(Extender extender, int runs) {
        var learning = extender.learning().orElseThrow(() -> new IllegalStateException("the deployed extender does not learn"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (learning.accepted() < runs) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the extender learned " + learning.accepted() + " of " + runs + " runs within 30 s");
            }
            pause();
        }
    }

    private static void awaitRestored(Extender extender) {
        var learning = extender.learning().orElseThrow(() -> new IllegalStateException("the deployed extender does not learn"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!learning.restored()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the restarted extender did not read its ConfigMap within 30 s");
            }
            pause();
        }
    }

    /** The extender stops as its container does; what it learned since its last write is written as it stops. */
    private static void stop(TestCluster cluster, Extender extender) {
        try {
            cluster.stopExtender(extender);
        } catch (Exception e) {
            throw new IllegalStateException("stopping the learning scene's extender failed: " + e, e);
        }
    }

    /**
     * Until the extender sees every node wholly free, as before the first pod: the device plugin republishes a node's
     * free GPUs shortly after kubelet releases an ended pod's, and until then the extender counts them held, so the
     * nodes would differ by more than their cards.
     */
    private static void awaitEveryGpuFree(Extender extender, List<NodeSpec> nodes) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!nodes.stream().allMatch(node -> whollyFree(extender, node.name()))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the extender did not see the learning scene's GPUs free again within 30 s");
            }
            pause();
        }
    }

    private static boolean whollyFree(Extender extender, String node) {
        var facts = extender.view().facts(node);
        if (facts == null || facts.free() == null || facts.inventory() == null) {
            return false;
        }
        try {
            return new FreeDevicesCodec().decode(facts.free()).uuids().size() == new InventoryCodec().decode(facts.inventory()).size();
        } catch (InventoryFormatException e) {
            return false;
        }
    }

    private static void remove(KubernetesClient client, String name) {
        var pod = client.pods().inNamespace(DemoWorkload.NAMESPACE).withName(name);
        pod.delete();
        pod.waitUntilCondition(p -> p == null, 30, TimeUnit.SECONDS);
    }

    private static void pause() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the learning scene waited for the extender", e);
        }
    }
}
