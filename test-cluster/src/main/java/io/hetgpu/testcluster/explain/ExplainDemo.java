package io.hetgpu.testcluster.explain;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClass;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.testcluster.cluster.CustomResources;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.cluster.TestCluster;
import io.hetgpu.testcluster.cluster.TrainingOperator;
import io.hetgpu.testcluster.demo.DemoCluster;
import io.hetgpu.testcluster.demo.DemoWorkload;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.function.Consumer;

/**
 * The cluster {@code explain --demo} reads: the demo's eleven nodes in the in-process test cluster, each GPU node with
 * the real device plugin publishing its inventory, and what {@code manifests/} and the operators install beside hetgpu:
 * the PriorityClasses of {@code manifests/base}, and the CustomResourceDefinitions of JobSet and of Kubeflow's training
 * operator (so that a JobSet's or training job's member count is read from it, as in a cluster that runs them). Empty,
 * or with the demo's mix placed first by the test cluster's scheduler and the real extender ({@code loaded}).
 */
final class ExplainDemo implements AutoCloseable {

    private final TestCluster cluster;
    private final Path workDir;

    private ExplainDemo(TestCluster cluster, Path workDir) {
        this.cluster = cluster;
        this.workDir = workDir;
    }

    static ExplainDemo start(DeployedConfiguration configuration, boolean loaded, Consumer<String> progress)
            throws IOException, GpuDiscoveryException {
        var workDir = Files.createTempDirectory("hetgpu-explain-");
        TestCluster cluster = null;
        try {
            cluster = TestCluster.start(DemoCluster.nodes(), workDir, progress);
            furnish(cluster.client());
            if (loaded) {
                load(cluster, configuration, progress);
            }
            return new ExplainDemo(cluster, workDir);
        } catch (IOException | GpuDiscoveryException | RuntimeException e) {
            if (cluster != null) {
                cluster.close();
            }
            delete(workDir);
            throw e;
        }
    }

    /** What the demo cluster has beside its nodes: the manifests' PriorityClasses and the job operators' kinds. */
    static void furnish(KubernetesClient client) throws IOException {
        new TrainingOperator(client).install();
        CustomResources.define(client, "jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets");
        var file = ProjectFiles.manifests().resolve(DeployedConfiguration.BASE).resolve("priority-classes.yaml");
        var yaml = new ObjectMapper(new YAMLFactory());
        for (var document : yaml.readValues(yaml.createParser(file.toFile()), JsonNode.class).readAll()) {
            if ("PriorityClass".equals(document.path("kind").asText())) {
                client.resource(Serialization.jsonMapper().convertValue(document, PriorityClass.class)).create();
            }
        }
    }

    /** The demo's mix, placed by the test cluster's scheduler calling the real extender, as the demo places it. */
    private static void load(TestCluster cluster, DeployedConfiguration configuration, Consumer<String> progress) {
        var client = cluster.client();
        DemoWorkload.volumes().forEach(volume -> client.resource(volume).create());
        var extender = cluster.startExtender(configuration.extender());
        var settings = configuration.schedulerCalling(extender);
        var pods = DemoWorkload.pods(settings.schedulerName());
        pods.forEach(pod -> client.resource(pod).create());
        new SchedulerDriver(client, settings, HttpClient.newHttpClient(), ExplainRun.FIRST_BY_NAME).scheduleRound();
        progress.accept("the demo's " + pods.size() + " pods placed by hetgpu, as the demo places them");
    }

    KubernetesClient newClient() {
        return new KubernetesClientBuilder().withConfig(new ConfigBuilder(cluster.api().config()).withUserAgent(ExplainCommand.USER_AGENT).build())
                .build();
    }

    @Override
    public void close() throws IOException {
        cluster.close();
        delete(workDir);
    }

    private static void delete(Path dir) throws IOException {
        try (var files = Files.walk(dir)) {
            for (var file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        }
    }
}
