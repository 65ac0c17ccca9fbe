package io.hetgpu.testcluster.demo;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.extender.Extender;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.TrainingOperator;
import io.hetgpu.testcluster.report.HalfPlacedJobs;
import io.hetgpu.testcluster.report.NodeView;
import io.hetgpu.testcluster.report.Placement;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.io.IOException;
import java.net.http.HttpClient;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The demo's whole-jobs scene: two PyTorchJobs of 8 GPUs each (a master and a worker of 4 GPUs) arrive together on two
 * servers with 4 GPUs each, their pods created by the training operator as it reconciles both jobs at once: one job's
 * master, the other's master, then the workers. kube-scheduler places pod by pod and knows no jobs, so each job gets a
 * pod on one server and neither can start: both stall, holding 8 GPUs that do nothing. hetgpu places a job whole or
 * not at all: one job runs, the other waits holding nothing.
 */
final class JobsScene {

    static final String NODE_1 = "t4-1";
    static final String NODE_2 = "t4-2";
    static final List<String> JOBS = List.of("gpt-finetune", "vit-pretrain");
    static final int GPUS_PER_POD = 4;
    /** The replica types of each job, in the order the operator creates them. */
    private static final List<String> REPLICAS = List.of("Master", "Worker");
    /** How many times kube-scheduler tries the pods: the stall is no moment's state, retrying changes nothing. */
    static final int ATTEMPTS = 3;

    /** How the extender's reason for refusing a pod everywhere begins ("pod ml/x cannot be placed: …"). */
    private static final String REFUSED = "pod ";
    /** How the scene marks the extender's reason. */
    private static final String EXTENDER = "hetgpu: ";

    /**
     * @param placements every pod once the scheduler has tried each {@link #ATTEMPTS} times
     * @param halfPlaced the jobs that run in part, and the GPUs they hold
     * @param waiting    why each pod still pending waits: the extender's reason where an attempt reached it, else
     *                   kube-scheduler's FailedScheduling message
     */
    record Outcome(DemoRun.Scheduler scheduler, List<Placement> placements, List<NodeView> nodes, HalfPlacedJobs halfPlaced,
                   Map<String, String> waiting) {
    }

    private JobsScene() {
    }

    static Outcome run(DemoRun.Scheduler scheduler, DeployedConfiguration configuration, long seed, Consumer<String> progress)
            throws IOException, GpuDiscoveryException, InventoryFormatException {
        var nodes = List.of(NodeSpec.gpu(NODE_1, "rack-a", "zone-1", "t4-4x"), NodeSpec.gpu(NODE_2, "rack-a", "zone-1", "t4-4x"));
        return FreshCluster.run(scheduler.title + ", jobs scene", nodes, progress, cluster -> {
            var client = cluster.client();
            var operator = new TrainingOperator(client).install();
            var schedulerName = configuration.scheduler().schedulerName();
            var jobs = JOBS.stream().map(name -> operator.submit(TrainingOperator.Kind.PYTORCH_JOB, DemoWorkload.NAMESPACE, name,
                    Map.of("Master", 1, "Worker", 1))).toList();
            var pods = new ArrayList<Pod>();
            for (var type : REPLICAS) {
                for (var job : jobs) {
                    pods.add(client.resource(TrainingOperator.pod(job, type, 0, TrainingOperator.Replica.of(GPUS_PER_POD, 0), schedulerName)).create());
                }
            }
            progress.accept(scheduler.title + ", jobs scene: " + pods.size() + " pods of " + String.join(" and ", JOBS) + " created, interleaved");
            var settings = switch (scheduler) {
                case HETGPU -> {
                    // Started once the pods exist, so that its informers hold every one of them when kube-scheduler first asks.
                    var extender = cluster.startExtender(configuration.extender());
                    awaitJobSizes(extender, pods);
                    yield configuration.schedulerCalling(extender);
                }
                case BASELINE -> configuration.scheduler().withoutExtenders();
            };
            var driver = new SchedulerDriver(client, settings, HttpClient.newHttpClient(), seed);
            var waiting = new TreeMap<String, String>();
            for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
                for (var decision : driver.scheduleRound()) {
                    var name = decision.pod().substring(decision.pod().indexOf('/') + 1);
                    switch (decision) {
                        case Decision.Bound bound -> awaitRunning(client, name);
                        // Once the other job's pods run, kube-scheduler's own filter refuses before the extender is asked:
                        // the extender's reason from an earlier attempt is the one that says why.
                        case Decision.Unschedulable unschedulable -> waiting.merge(name, reason(unschedulable), JobsScene::extenders);
                        case Decision.Failed failed -> waiting.merge(name, failed.error(), JobsScene::extenders);
                        case Decision.Nominated nominated -> waiting.merge(name, nominated.message(), JobsScene::extenders);
                    }
                }
            }
            var reader = new PlacementReader(client, cluster.nodes());
            var placements = reader.placements(Map.of());
            waiting.keySet().removeIf(pod -> placements.stream().anyMatch(p -> p.pod().equals(pod) && p.isPlaced()));
            return new Outcome(scheduler, placements, reader.nodes(), HalfPlacedJobs.of(placements), waiting);
        });
    }

    /**
     * The extender's own reason where it gave one (its reason for the pod, not a node's, without the pod's name, which the
     * scene prints before it), else kube-scheduler's message.
     */
    private static String reason(Decision.Unschedulable unschedulable) {
        return unschedulable.reasons().values().stream().filter(why -> why.startsWith(REFUSED)).findFirst()
                .map(why -> EXTENDER + why.substring(why.indexOf(": ", REFUSED.length()) + 2)).orElse(unschedulable.message());
    }

    private static boolean isExtenders(String reason) {
        return reason.startsWith(EXTENDER);
    }

    /** Of a pod's earlier and later reason, the extender's, else the later. */
    private static String extenders(String earlier, String later) {
        return isExtenders(later) || !isExtenders(earlier) ? later : earlier;
    }

    /**
     * The extender reads each job's member count from its PyTorchJob, with an informer of its own that its readiness does
     * not wait for; the scene starts once it has.
     */
    private static void awaitJobSizes(Extender extender, List<Pod> pods) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (var pod : pods) {
            var job = JobMembershipReader.read(pod, new ArrayList<>()).orElseThrow();
            while (extender.jobSizes().membersOf(job).isEmpty()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the extender has not read the size of job " + job.key() + " within 30 s: "
                            + extender.jobSizes().whyUnknown(job).orElse(""));
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while the scene waited for the extender", e);
                }
            }
        }
    }

    private static void awaitRunning(KubernetesClient client, String name) {
        client.pods().inNamespace(DemoWorkload.NAMESPACE).withName(name)
                .waitUntilCondition(p -> p != null && p.getStatus() != null && "Running".equals(p.getStatus().getPhase()), 30, TimeUnit.SECONDS);
    }

    /** One scheduler's scene: the demo's line, then each job as it stands, then why the pods that wait do. */
    static String describe(Outcome scene) {
        var text = new StringBuilder(String.format(Locale.ROOT, "  %-21s %s%n", scene.scheduler().title + ":", scene.halfPlaced().line()));
        var states = jobs(scene.placements()).entrySet().stream().map(job -> job.getKey() + " " + state(job.getValue()))
                .collect(Collectors.joining("; "));
        text.append(String.format(Locale.ROOT, "  %-21s %s%n", "", states));
        scene.waiting().forEach((pod, why) -> text.append(String.format(Locale.ROOT, "  %-21s %s waits: %s%n", "", pod, why)));
        return text.toString();
    }

    /** The pods of each job of the scene, by job name. */
    private static Map<String, List<Placement>> jobs(List<Placement> placements) {
        var byJob = new LinkedHashMap<String, List<Placement>>();
        for (var job : JOBS) {
            byJob.put(job, placements.stream().filter(p -> p.job().equals(job)).toList());
        }
        return byJob;
    }

    /** "runs whole (master on t4-1, worker on t4-2)", "waits, holding no GPU", or which pod runs where and which waits. */
    private static String state(List<Placement> pods) {
        var where = pods.stream().map(p -> p.role() + (p.isPlaced() ? " on " + p.node() : " pending")).collect(Collectors.joining(", "));
        if (pods.stream().allMatch(Placement::isPlaced)) {
            return "runs whole (" + where + ")";
        }
        if (pods.stream().noneMatch(Placement::isPlaced)) {
            return "waits, holding no GPU";
        }
        return "is stalled half-placed (" + where + ")";
    }

    /** The picture's comparison table, its first row the header. */
    static List<List<String>> rows(List<Outcome> scenes) {
        var rows = new ArrayList<List<String>>();
        rows.add(List.of("", "half-placed jobs", "GPUs held by them", "jobs running whole", "jobs waiting whole"));
        for (var scene : scenes) {
            var jobs = jobs(scene.placements());
            rows.add(List.of(scene.scheduler().title, Integer.toString(scene.halfPlaced().jobs().size()), Integer.toString(scene.halfPlaced().gpus()),
                    Long.toString(jobs.values().stream().filter(pods -> pods.stream().allMatch(Placement::isPlaced)).count()),
                    Long.toString(jobs.values().stream().filter(pods -> pods.stream().noneMatch(Placement::isPlaced)).count())));
        }
        return rows;
    }
}
