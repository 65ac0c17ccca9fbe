package io.hetgpu.testcluster.shipped;

import static io.hetgpu.testcluster.shipped.ShippedArtifacts.DEVICE_PLUGIN;
import static io.hetgpu.testcluster.shipped.ShippedArtifacts.SCHEDULER_EXTENDER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.testcluster.manifests.MonitoringQueries;
import io.hetgpu.testcluster.manifests.PromQl;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every metric that an alert or a dashboard panel of manifests/monitoring/ names, and every label it matches or
 * groups on, is one the programs export: both shipped jars run on the test cluster as the install runs them, place,
 * bind and weigh a preemption (so that the labelled series exist), and their {@code /metrics} are read.
 */
@ExtendWith(ShippedClusterExtension.class)
class ShippedMetricsTest {

    private final ShippedCluster cluster;

    ShippedMetricsTest(ShippedCluster cluster) {
        this.cluster = cluster;
    }

    private static final Duration START = Duration.ofSeconds(60);
    /** Series Prometheus makes itself for every target: not the programs'. */
    private static final Set<String> PROMETHEUS_OWN = Set.of("up");
    /** Labels Prometheus adds to every series of a target (the ServiceMonitors' defaults), and histograms' le. */
    private static final Set<String> TARGET_LABELS = Set.of("job", "namespace", "pod", "instance", "service", "container", "endpoint", "le");
    private static final Pattern SAMPLE = Pattern.compile("(?m)^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)})? ");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"");


    @Test
    void everyMetricAndLabelTheAlertsAndPanelsNameIsExported() throws Exception {
        var pluginPod = cluster.pluginPod();
        var extenderPod = cluster.extenderPod();
        try (var plugin = cluster.start(DEVICE_PLUGIN, pluginPod, "device-plugin.log");
             var extender = cluster.start(SCHEDULER_EXTENDER, extenderPod, "extender.log")) {
            var verbs = "http://127.0.0.1:" + extenderPod.flagPort("--port");
            var extenderMetrics = "http://127.0.0.1:" + extenderPod.port("metrics") + "/metrics";
            var pluginMetrics = "http://127.0.0.1:" + pluginPod.port("http") + "/metrics";
            var train = create("train", 2, -100);
            await("the GPU node's inventory reaches the extender").atMost(START).ignoreExceptions()
                    .failFast("a jar exited", JarProcess.stillRunning(plugin, extender)).untilAsserted(() -> {
                        var filter = cluster.post(verbs + "/filter", args(train));
                        assertThat(filter.path("NodeNames").toString()).as(filter::toString).contains(ShippedCluster.GPU_NODE);
                    });

            // What kube-scheduler does for one pod: filter, prioritize, bind; kubelet then allocates its GPUs.
            cluster.post(verbs + "/prioritize", args(train));
            var bound = cluster.post(verbs + "/bind", """
                    {"PodName": "train", "PodNamespace": "default", "PodUID": "%s", "Node": "%s"}"""
                    .formatted(train.getMetadata().getUid(), ShippedCluster.GPU_NODE));
            assertThat(bound.path("Error").asText("")).isEmpty();
            // An urgent pod for which kube-scheduler proposes evicting the bound one.
            var urgent = create("urgent", 8, 1000);
            cluster.post(verbs + "/preempt", """
                    {"Pod": %s, "NodeNameToMetaVictims": {"%s": {"Pods": [{"UID": "%s"}], "NumPDBViolations": 0}}}"""
                    .formatted(json(urgent), ShippedCluster.GPU_NODE, train.getMetadata().getUid()));

            var exported = new HashMap<String, Set<String>>();
            await("the metrics of the placement, the bind and the preemption").atMost(START).untilAsserted(() -> {
                exported.clear();
                read(cluster.get(extenderMetrics).body(), exported);
                read(cluster.get(pluginMetrics).body(), exported);
                assertThat(exported).containsKeys("hetgpu_extender_binds_total", "hetgpu_extender_preemption_victims_total",
                        "hetgpu_extender_placements_total", "hetgpu_extender_free_gpus", "hetgpu_device_plugin_registrations_total");
            });

            var missing = new ArrayList<String>();
            for (var query : MonitoringQueries.all()) {
                var reads = PromQl.reads(query.expr());
                var labelsOfQuery = new HashSet<>(TARGET_LABELS);
                for (var selector : reads.selectors()) {
                    if (PROMETHEUS_OWN.contains(selector.metric())) {
                        continue;
                    }
                    var labels = exported.get(selector.metric());
                    if (labels == null) {
                        missing.add(query.source() + ": metric " + selector.metric());
                        continue;
                    }
                    labelsOfQuery.addAll(labels);
                    selector.labels().stream().filter(l -> !labels.contains(l) && !TARGET_LABELS.contains(l))
                            .forEach(l -> missing.add(query.source() + ": label " + l + " of " + selector.metric()));
                }
                reads.groupingLabels().stream().filter(l -> !labelsOfQuery.contains(l))
                        .forEach(l -> missing.add(query.source() + ": grouping label " + l));
            }
            assertThat(MonitoringQueries.all()).hasSizeGreaterThan(15);
            assertThat(missing).as("what the alerts and panels name that /metrics does not export (exported: %s)", exported.keySet())
                    .isEmpty();
        }
    }

    /** Each sample's metric name with the label names it carries. */
    private static void read(String text, Map<String, Set<String>> into) {
        var matcher = SAMPLE.matcher(text);
        while (matcher.find()) {
            var labels = into.computeIfAbsent(matcher.group(1), name -> new HashSet<>());
            if (matcher.group(3) != null) {
                LABEL.matcher(matcher.group(3)).results().forEach(l -> labels.add(l.group(1)));
            }
        }
    }

    private Pod create(String name, int gpus, int priority) {
        var gpu = Map.of(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity(Integer.toString(gpus)));
        return cluster.client.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName(name)
                .withNamespace("default").endMetadata().withNewSpec().withSchedulerName("hetgpu-scheduler")
                .withPriority(priority).addNewContainer().withName("main").withImage("busybox").withNewResources().withLimits(gpu)
                .withRequests(gpu).endResources().endContainer().endSpec().withNewStatus().withPhase("Pending").endStatus().build()).create();
    }

    private static String args(Pod pod) {
        return "{\"Pod\": " + json(pod) + ", \"NodeNames\": [\"" + ShippedCluster.GPU_NODE + "\", \"" + ShippedCluster.CPU_NODE + "\"]}";
    }

    private static String json(Pod pod) {
        return new KubernetesSerialization().asJson(pod);
    }

}
