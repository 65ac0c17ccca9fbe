package io.hetgpu.testcluster.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.report.DataDistance;
import io.hetgpu.testcluster.report.Placement;
import io.hetgpu.testcluster.scheduler.Decision;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Each rule of the mission, observed in a real placement: the demo's cluster and job mix, the real
 * device plugins, simulated kubelets and the real extender configured as manifests/ deploys it.
 */
class MissionRulesTest {

    private static List<Placement> placements;
    private static List<Decision> decisions;
    private static DemoRun.Outcome outcome;

    @BeforeAll
    static void runTheDemoWorkload() throws Exception {
        outcome = DemoRun.run(DemoRun.Scheduler.HETGPU, DeployedConfiguration.load(ProjectFiles.manifests()), 42, message -> { });
        placements = outcome.placements();
        decisions = outcome.decisions();
    }

    private static List<Placement> where(Predicate<Placement> which) {
        return placements.stream().filter(which).toList();
    }

    @Test
    void everyPodIsPlaced() {
        assertThat(decisions).hasSize(20).allSatisfy(d -> assertThat(d).isInstanceOf(Decision.Bound.class));
    }

    @Test
    void highPriorityTrainingLandsOnTheNewestCards() {
        assertThat(where(p -> p.priority().equals("high") && !p.gpus().isEmpty()))
                .hasSize(5).allSatisfy(p -> assertThat(p.card()).isIn("H100", "A100"));
        // The 8-GPU job gets the best card of all.
        assertThat(where(p -> p.job().equals("bert-large"))).singleElement().satisfies(p -> assertThat(p.card()).isEqualTo("H100"));
    }

    @Test
    void lowPriorityTrainingLandsOnTheOldestCardsThatFit() {
        assertThat(where(p -> p.priority().equals("low"))).hasSize(10).allSatisfy(p -> assertThat(p.card()).isEqualTo("K80"));
    }

    @Test
    void multiGpuPodsGetNvlinkConnectedSets() {
        assertThat(where(p -> p.gpus().size() > 1)).hasSize(5).allSatisfy(p -> assertThat(p.nvlinkSet()).isTrue());
    }

    @Test
    void psAndWorkersOfOneJobLandTogetherNearTheirData() {
        var resnet = where(p -> p.job().equals("resnet"));
        assertThat(resnet).hasSize(6);
        assertThat(resnet.stream().map(Placement::rack).distinct()).containsExactly(DemoCluster.DATA_RACK);
        assertThat(resnet).allSatisfy(p -> assertThat(p.data()).isEqualTo(DataDistance.SAME_RACK));
        // Parameter servers need no GPU, so they take the CPU node of the workers' rack, not a GPU node.
        assertThat(where(p -> p.role().equals("ps"))).allSatisfy(p -> assertThat(p.card()).isEqualTo("cpu"));
    }

    @Test
    void cpuOnlyPodsStayOffGpuNodes() {
        var cpuNodes = Set.copyOf(DemoCluster.nodes().stream().filter(n -> !n.hasGpus()).map(n -> n.name()).toList());
        assertThat(where(p -> p.gpus().isEmpty())).hasSize(5).allSatisfy(p -> assertThat(p.node()).isIn(cpuNodes));
    }

    @Test
    void theDemoSaysWhyAPodLeftTheExtendersBestNode() {
        // The CPU nodes tie in the extender's eyes; kube-scheduler's own spreading puts serving-0 beside no parameter server.
        assertThat(outcome.choices().get("serving-0").detour()).hasValueSatisfying(line -> assertThat(line)
                .startsWith("went to cpu-b1, not cpu-a1: the extender scored both 10/10").contains("kube-scheduler's own scores"));
        // The page's tooltip carries both: the extender's reason, then why kube-scheduler chose otherwise.
        assertThat(outcome.placements()).filteredOn(p -> p.pod().equals("serving-0")).singleElement()
                .satisfies(p -> assertThat(p.reason()).startsWith("best: cpu-a1").contains("\nkube-scheduler: went to cpu-b1, not cpu-a1"));
        // The urgent job refuses the A100s (evictForFasterCards): one node is left, and the filter says why the others are not.
        assertThat(outcome.explanations().get("bert-large-0")).startsWith("best: dgx-h100-1, the only node that fits (8x H100, tier 85, 18 NVLinks per GPU pair)")
                .contains("dgx-a100-1: faster cards are free, or preemption can free them, for this high-priority pod");
        assertThat(outcome.placements()).filteredOn(p -> p.pod().equals("resnet-worker-0")).singleElement()
                .satisfies(p -> assertThat(p.reason()).startsWith("best: dgx-a100-1, the only node that fits (2x A100, tier 70"));
    }

    /** The front page shows the demo's comparison; it must be what the demo prints today, not what it printed once. */
    @Test
    void theFrontPageShowsTheComparisonTheDemoPrints() throws Exception {
        var baseline = DemoRun.run(DemoRun.Scheduler.BASELINE, DeployedConfiguration.load(ProjectFiles.manifests()), 42, message -> { });
        var summaries = new LinkedHashMap<String, DemoSummary>();
        summaries.put(DemoRun.Scheduler.HETGPU.title, DemoSummary.of(outcome.placements()));
        summaries.put(DemoRun.Scheduler.BASELINE.title, DemoSummary.of(baseline.placements()));
        var printed = DemoSummary.compare(summaries).lines().map(String::stripTrailing).toList();

        var readme = Files.readString(ProjectFiles.manifests().resolveSibling("README.md")).lines().map(String::stripTrailing).toList();
        int header = readme.indexOf(printed.getFirst());
        assertThat(header).as("README.md shows the demo's comparison, starting with its header line").isNotNegative();
        assertThat(readme.subList(header, Math.min(readme.size(), header + printed.size())))
                .as("README.md's comparison, against what ./hetgpu demo prints").isEqualTo(printed);
    }
}
