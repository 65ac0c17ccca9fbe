package io.hetgpu.testcluster.scheduler;

import static io.hetgpu.testcluster.scheduler.ClusterObjects.node;
import static io.hetgpu.testcluster.scheduler.ClusterObjects.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.hetgpu.kubescheduler.selection.TieBreak;
import java.net.http.HttpClient;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The test cluster's scheduler with kube-scheduler's DefaultPreemption, without extenders: kube-scheduler's own choice. */
@EnableKubernetesMockClient(crud = true)
class SchedulerPreemptionTest {

    KubernetesClient client;

    private SchedulerDriver driver() {
        return new SchedulerDriver(client, new SchedulerSettings("hetgpu-scheduler", 100, List.of()), HttpClient.newHttpClient(), 1)
                .preempting(1, TieBreak.random(new java.util.Random(1)));
    }

    private void running(String name, String node, int gpus, int priority, String startTime) {
        var pod = pod(name, gpus, priority);
        pod.getSpec().setNodeName(node);
        pod.getStatus().setPhase("Running");
        pod.getStatus().setStartTime(startTime);
        pod.getMetadata().setLabels(java.util.Map.of("job", name.replaceAll("-\\d+$", "")));
        client.pods().resource(pod).create();
    }

    private Pod get(String name) {
        return client.pods().inNamespace("default").withName(name).get();
    }

    @Test
    void anUrgentPodEvictsALowerOneAndIsBoundOnceItIsGone() {
        client.nodes().resource(node("gpu-1", 2)).create();
        running("batch-0", "gpu-1", 2, 0, "2026-11-01T00:00:00Z");
        client.pods().resource(pod("urgent", 2, 1000)).create();
        var driver = driver();

        var first = driver.scheduleRound();
        assertThat(first).singleElement().isInstanceOfSatisfying(Decision.Nominated.class, nominated -> {
            assertThat(nominated.node()).isEqualTo("gpu-1");
            assertThat(nominated.victims()).containsExactly("default/batch-0");
        });
        assertThat(get("batch-0")).isNull();
        assertThat(get("urgent").getStatus().getNominatedNodeName()).isEqualTo("gpu-1");
        assertThat(client.v1().events().inNamespace("default").list().getItems())
                .extracting(e -> e.getInvolvedObject().getName() + " " + e.getReason())
                .contains("batch-0 Preempted", "urgent FailedScheduling");

        assertThat(driver.scheduleRound()).singleElement().isInstanceOfSatisfying(Decision.Bound.class,
                bound -> assertThat(bound.node()).isEqualTo("gpu-1"));
    }

    @Test
    void aPodThatNeverPreemptsWaits() {
        client.nodes().resource(node("gpu-1", 2)).create();
        running("batch-0", "gpu-1", 2, 0, "2026-11-01T00:00:00Z");
        var polite = pod("polite", 2, 1000);
        polite.getSpec().setPreemptionPolicy("Never");
        client.pods().resource(polite).create();

        assertThat(driver().scheduleRound()).singleElement().isInstanceOfSatisfying(Decision.Unschedulable.class,
                u -> assertThat(u.message()).endsWith("preemption: not eligible due to preemptionPolicy=Never."));
        assertThat(get("batch-0")).isNotNull();
    }

    @Test
    void aJobLosesNoPodToAPodOfItsOwnPriority() {
        client.nodes().resource(node("gpu-1", 2)).create();
        running("worker-0", "gpu-1", 2, 1000, "2026-11-01T00:00:00Z");
        client.pods().resource(pod("worker-1", 2, 1000)).create();

        assertThat(driver().scheduleRound()).singleElement().isInstanceOf(Decision.Unschedulable.class);
        assertThat(get("worker-0")).isNotNull();
    }

    @Test
    void aDisruptionBudgetSendsTheEvictionToTheNodeWhereItBreaksNone() {
        // Two equal nodes; the job on gpu-1 may not be disrupted, the one on gpu-2 may: gpu-2 is chosen.
        client.nodes().resource(node("gpu-1", 2)).create();
        client.nodes().resource(node("gpu-2", 2)).create();
        running("guarded-0", "gpu-1", 2, 0, "2026-11-01T00:00:00Z");
        running("spare-0", "gpu-2", 2, 0, "2026-11-01T00:00:00Z");
        client.policy().v1().podDisruptionBudget().resource(new PodDisruptionBudgetBuilder().withNewMetadata().withName("guarded")
                .withNamespace("default").endMetadata().withNewSpec().withNewSelector().addToMatchLabels("job", "guarded").endSelector()
                .withMinAvailable(new io.fabric8.kubernetes.api.model.IntOrString(1)).endSpec()
                .withNewStatus().withDisruptionsAllowed(0).endStatus().build()).create();
        client.pods().resource(pod("urgent", 2, 1000)).create();

        assertThat(driver().scheduleRound()).singleElement().isInstanceOfSatisfying(Decision.Nominated.class,
                nominated -> assertThat(nominated.victims()).containsExactly("default/spare-0"));
        assertThat(get("guarded-0")).isNotNull();
    }

    @Test
    void theNodeWhoseVictimsStartedLatestLosesTheLeastWork() {
        client.nodes().resource(node("gpu-1", 2)).create();
        client.nodes().resource(node("gpu-2", 2)).create();
        running("old-0", "gpu-1", 2, 0, "2026-11-01T00:00:00Z");
        running("new-0", "gpu-2", 2, 0, "2026-11-02T00:00:00Z");
        client.pods().resource(pod("urgent", 2, 1000)).create();

        assertThat(driver().scheduleRound()).singleElement().isInstanceOfSatisfying(Decision.Nominated.class,
                nominated -> assertThat(nominated.victims()).containsExactly("default/new-0"));
    }
}
