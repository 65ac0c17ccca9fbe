package io.hetgpu.testcluster.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The demo's DRA scene on the test cluster: nodes of hetgpu's DRA driver, kube-scheduler alone. hetgpu's claims send the
 * low-priority pod to the oldest cards, the urgent ones to the newest and keep four GPUs on NVLink; plain claims take
 * what comes first wherever kube-scheduler's default scores send them.
 */
class DraSceneTest {

    private static Map<String, DraScene.Placed> byPod(DraScene.Outcome scene) {
        return scene.placed().stream().collect(Collectors.toMap(p -> p.pod().name(), Function.identity()));
    }

    @Test
    void hetgpusClaimsSteerKubeSchedulerByTierAndNvlinkWherePlainClaimsTakeWhatComesFirst() throws Exception {
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        var hetgpu = DraScene.run(DraScene.Claims.HETGPU, configuration, 42, message -> { });
        var plain = DraScene.run(DraScene.Claims.PLAIN, configuration, 42, message -> { });

        var urgent = java.util.List.of("urgent-1", "urgent-2", "urgent-3");
        var placed = byPod(hetgpu);
        assertThat(placed).containsOnlyKeys("urgent-1", "urgent-2", "urgent-3", "nightly-sweep", "allreduce-4");
        assertThat(urgent).allSatisfy(pod -> assertThat(placed.get(pod).cards()).containsExactly("H100 (tier 85)"));
        assertThat(placed.get("nightly-sweep").node()).isEqualTo(DraScene.T4);
        assertThat(placed.get("allreduce-4").devices()).hasSize(4);
        assertThat(placed.get("allreduce-4").nvlinkConnected()).isTrue();

        // Plain claims: kube-scheduler's default scores spread the urgent pods, one to each node, whatever the tie-break.
        var first = byPod(plain);
        assertThat(first).containsKeys("urgent-1", "urgent-2", "urgent-3");
        assertThat(urgent.stream().map(pod -> first.get(pod).node()).distinct()).containsExactlyInAnyOrder(DraScene.H100, DraScene.V100, DraScene.T4);
        assertThat(DraScene.describe(hetgpu)).contains("hetgpu's claims:", "urgent-1 (high, 1 GPU)", DraScene.H100, "NVLink-connected");
        assertThat(DraScene.describe(plain)).contains("plain claims:", "allreduce-4 (normal, 4 GPUs)");
    }
}
