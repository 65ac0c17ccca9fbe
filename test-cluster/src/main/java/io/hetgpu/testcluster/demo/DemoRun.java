package io.hetgpu.testcluster.demo;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.report.NodeView;
import io.hetgpu.testcluster.report.Placement;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.io.IOException;
import java.net.http.HttpClient;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/** One run of the demo: a fresh test cluster, the workload submitted at once, one scheduling round, the outcome read back. */
final class DemoRun {

    /** Who decides: hetgpu (kube-scheduler with the extender, as manifests/ configures it) or kube-scheduler alone. */
    enum Scheduler {
        HETGPU("hetgpu"), BASELINE("kube-scheduler alone");

        final String title;

        Scheduler(String title) {
            this.title = title;
        }
    }

    /**
     * @param explanations the extender's event text per pod (hetgpu only)
     * @param choices      per pod scored over more than one node: kube-scheduler's own and the extender's scores (hetgpu only)
     */
    record Outcome(Scheduler scheduler, List<Decision> decisions, List<Placement> placements, List<NodeView> nodes,
                   Map<String, String> explanations, Map<String, HostChoice> choices) {
    }

    private DemoRun() {
    }

    static Outcome run(Scheduler scheduler, DeployedConfiguration configuration, long seed, Consumer<String> progress)
            throws IOException, GpuDiscoveryException, InventoryFormatException {
        return FreshCluster.run(scheduler.title, DemoCluster.nodes(), progress, cluster -> {
            var client = cluster.client();
            DemoWorkload.volumes().forEach(volume -> client.resource(volume).create());
            var settings = switch (scheduler) {
                case HETGPU -> {
                    var extender = cluster.startExtender(configuration.extender());
                    progress.accept(scheduler.title + ": scheduler extender beside the scheduler, as in the shipped pod: verbs on 127.0.0.1:"
                            + extender.port() + ", metrics and probes on port " + extender.metricsPort() + "; informers synced");
                    yield configuration.schedulerCalling(extender);
                }
                case BASELINE -> configuration.scheduler().withoutExtenders();
            };
            var pods = DemoWorkload.pods(settings.schedulerName());
            pods.forEach(pod -> client.resource(pod).create());
            progress.accept(scheduler.title + ": " + pods.size() + " pods submitted; scheduling one at a time, highest priority first");
            var driver = new SchedulerDriver(client, settings, HttpClient.newHttpClient(), seed);
            var choices = new HostChoices(settings.extenders().isEmpty() ? 0 : settings.extenders().getFirst().weight());
            var decisions = driver.scheduleRound(choices::record);
            for (var decision : decisions) {
                if (decision instanceof Decision.Bound bound) {
                    var name = bound.pod().substring(bound.pod().indexOf('/') + 1);
                    client.pods().inNamespace(DemoWorkload.NAMESPACE).withName(name)
                            .waitUntilCondition(DemoRun::isStarted, 30, TimeUnit.SECONDS);
                }
            }
            progress.accept(scheduler.title + ": every bound pod was admitted by its kubelet");
            var reader = new PlacementReader(client, cluster.nodes());
            var explanations = explanations(client.v1().events().inNamespace(DemoWorkload.NAMESPACE).list().getItems());
            // Where kube-scheduler overruled the extender's best, the reason says so after the extender's own.
            var reasons = new HashMap<>(explanations);
            choices.byPod().forEach((pod, choice) -> choice.detour().ifPresent(line ->
                    reasons.merge(pod, "kube-scheduler: " + line, (extender, detour) -> extender + "\n" + detour)));
            return new Outcome(scheduler, decisions, reader.placements(reasons), reader.nodes(), explanations, choices.byPod());
        });
    }

    private static boolean isStarted(Pod pod) {
        var phase = pod == null || pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Running".equals(phase) || "Failed".equals(phase);
    }

    /** The latest extender explanation per pod; the scheduler's own Scheduled events are left out. */
    private static Map<String, String> explanations(List<Event> events) {
        return events.stream()
                .filter(e -> e.getSource() == null || !"hetgpu-scheduler".equals(e.getSource().getComponent()))
                .filter(e -> !"Scheduled".equals(e.getReason()) && !"FailedScheduling".equals(e.getReason()))
                .sorted(Comparator.comparing(e -> String.valueOf(e.getLastTimestamp())))
                .collect(Collectors.toMap(e -> e.getInvolvedObject().getName(), Event::getMessage, (a, b) -> b));
    }
}
