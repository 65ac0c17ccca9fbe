package io.hetgpu.testcluster.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.report.Placement;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The demo's whole-jobs scene, with the real extender, device plugins and simulated kubelets: two 8-GPU PyTorchJobs whose
 * pods arrive interleaved on two 4-GPU servers. kube-scheduler alone stalls both; hetgpu runs one whole and the other
 * waits holding nothing.
 */
class JobsSceneTest {

    private static Map<String, List<Placement>> byJob(JobsScene.Outcome scene) {
        return scene.placements().stream().collect(Collectors.groupingBy(Placement::job));
    }

    @Test
    void hetgpuRunsOneJobWholeAndTheOtherWaitsHoldingNothing() throws Exception {
        var scene = JobsScene.run(DemoRun.Scheduler.HETGPU, DeployedConfiguration.load(ProjectFiles.manifests()), 42, message -> { });

        assertThat(scene.halfPlaced().jobs()).isEmpty();
        assertThat(scene.halfPlaced().gpus()).isZero();
        var jobs = byJob(scene);
        assertThat(jobs).containsOnlyKeys(JobsScene.JOBS);
        var running = jobs.values().stream().filter(pods -> pods.stream().allMatch(Placement::isPlaced)).toList();
        var waiting = jobs.values().stream().filter(pods -> pods.stream().noneMatch(Placement::isPlaced)).toList();
        assertThat(running).as("jobs running whole").singleElement().satisfies(pods -> {
            assertThat(pods).hasSize(2).allSatisfy(pod -> assertThat(pod.gpus()).hasSize(JobsScene.GPUS_PER_POD));
            assertThat(pods).extracting(Placement::node).containsExactlyInAnyOrder(JobsScene.NODE_1, JobsScene.NODE_2);
        });
        var waitingJob = waiting.getFirst().getFirst().job();
        assertThat(waiting).as("jobs waiting whole").hasSize(1);
        // Its pods are told what the job lacks, and that nothing is held for it (the first asked while a server had room;
        // after that kube-scheduler's own filter finds both servers full before it asks the extender).
        assertThat(scene.waiting()).containsOnlyKeys(waiting.getFirst().stream().map(Placement::pod).toList());
        assertThat(scene.waiting().values()).anySatisfy(why -> assertThat(why)
                .contains("job " + DemoWorkload.NAMESPACE + "/" + waitingJob, 2 * JobsScene.GPUS_PER_POD + " GPUs", "no GPU is held"));
        assertThat(JobsScene.describe(scene)).contains(scene.halfPlaced().line(), waitingJob + " waits, holding no GPU");
    }

    @Test
    void kubeSchedulerAloneStallsBothJobsHalfPlaced() throws Exception {
        var scene = JobsScene.run(DemoRun.Scheduler.BASELINE, DeployedConfiguration.load(ProjectFiles.manifests()), 42, message -> { });

        assertThat(scene.halfPlaced().jobs()).containsExactlyInAnyOrderElementsOf(JobsScene.JOBS);
        assertThat(scene.halfPlaced().gpus()).isEqualTo(JobsScene.JOBS.size() * JobsScene.GPUS_PER_POD);
        // One pod of each job on each server, the other pod of each pending after every attempt.
        byJob(scene).forEach((job, pods) -> assertThat(pods).as(job).filteredOn(Placement::isPlaced).singleElement()
                .satisfies(pod -> assertThat(pod.gpus()).hasSize(JobsScene.GPUS_PER_POD)));
        assertThat(scene.placements()).filteredOn(Placement::isPlaced).extracting(Placement::node)
                .containsExactlyInAnyOrder(JobsScene.NODE_1, JobsScene.NODE_2);
        assertThat(scene.waiting()).hasSize(JobsScene.JOBS.size());
        assertThat(JobsScene.describe(scene)).contains(scene.halfPlaced().line());
    }
}
