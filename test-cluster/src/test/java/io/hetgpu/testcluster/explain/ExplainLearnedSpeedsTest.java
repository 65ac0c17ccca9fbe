package io.hetgpu.testcluster.explain;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.hetgpu.extender.throughput.LearnedState;
import io.hetgpu.extender.throughput.LearnedStateCodec;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code hetgpu explain} ranks a pod that names its workload class as the cluster's extender does, with what that
 * extender learned (its ConfigMap), and says so with the figures; a document it cannot read is a note, not a failure.
 */
class ExplainLearnedSpeedsTest {

    @TempDir
    Path dir;

    /** resnet50 has run on V100 three times and on K80 twice: the other cards' figures are priors. */
    private static final LearnedState LEARNED = new LearnedState(List.of(new LearnedState.ClassSamples("resnet50", List.of(
            new LearnedState.CardSamples("V100", List.of(new LearnedState.NamespaceSamples("ml", List.of(400.0, 410.0, 420.0)))),
            new LearnedState.CardSamples("K80", List.of(new LearnedState.NamespaceSamples("ml", List.of(130.0, 131.0))))))));

    @Test
    void aPodNamingItsClassIsRankedWithTheLearnedFiguresAndToldThem() throws Exception {
        var explained = explain(LearnedStateCodec.toJson(LEARNED));

        assertThat(explained.notes()).noneSatisfy(note -> assertThat(note).contains("hetgpu-throughputs"));
        var pod = explained.pods().getFirst();
        assertThat(pod.outcome()).isInstanceOf(PodExplanation.Placed.class);
        // A pod that prefers the newest cards goes where its class runs fastest; each card behind is said with its figure's
        // source. (A high-priority one would refuse the slower cards outright: evictForFasterCards.)
        assertThat(pod.ranking()).anySatisfy(rank -> assertThat(rank.behind())
                .contains("resnet50 runs ", " faster per GPU on ", " than on V100 (", "V100 learned, 3 runs)"));
        assertThat(pod.ranking()).anySatisfy(rank -> assertThat(rank.behind()).contains(" than on K80 (", "K80 learned, 2 runs)"));
    }

    @Test
    void aDocumentTheExtenderCannotReadIsANoteAndTiersDecide() throws Exception {
        var explained = explain("{\"schema\": 2}");

        assertThat(explained.notes()).contains("ConfigMap hetgpu-system/hetgpu-throughputs, throughputs.json: schema: expected 1, got \"2\": pods that name a "
                        + "workload class are ranked without learned speeds");
        assertThat(explained.pods().getFirst().ranking()).noneSatisfy(rank -> assertThat(rank.behind()).contains("resnet50 runs"));
    }

    private ExplainReport explain(String document) throws Exception {
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        var file = Files.writeString(dir.resolve("pod.yaml"), """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: train
                  annotations:
                    hetgpu.io/workload: resnet50
                    hetgpu.io/gpu-preference: newest
                spec:
                  schedulerName: hetgpu-scheduler
                  containers:
                    - name: main
                      image: train
                      resources:
                        limits:
                          nvidia.com/gpu: 1
                """);
        try (var demo = ExplainDemo.start(configuration, false, message -> { }); var client = demo.newClient()) {
            client.configMaps().inNamespace("hetgpu-system").resource(new ConfigMapBuilder().withNewMetadata().withName("hetgpu-throughputs")
                    .withNamespace("hetgpu-system").endMetadata().withData(Map.of("throughputs.json", document)).build()).create();
            var workloads = Workloads.of(WorkloadFiles.read(List.of(file.toString()), new ByteArrayInputStream(new byte[0])).objects(), "ml");
            return new ExplainRun(configuration).explain(ClusterReading.of(client), workloads, List.of(), "the demo cluster", "manifests/base");
        }
    }
}
