package io.hetgpu.testcluster.scheduler;

import static io.hetgpu.testcluster.scheduler.ClusterObjects.node;
import static io.hetgpu.testcluster.scheduler.ClusterObjects.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.net.http.HttpClient;
import java.util.List;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class SchedulerDriverTest {

    KubernetesClient client;

    @Test
    void bindsHighestPriorityFirstAndRecordsEvents() {
        client.nodes().resource(node("gpu-1", 2)).create();
        client.pods().resource(pod("low", 2, 0)).create();
        client.pods().resource(pod("high", 2, 1000)).create();
        var driver = new SchedulerDriver(client, new SchedulerSettings("hetgpu-scheduler", 100, List.of()), HttpClient.newHttpClient(), 1);

        var decisions = driver.scheduleRound();

        assertThat(decisions).extracting(Decision::pod).containsExactly("default/high", "default/low");
        assertThat(decisions.get(0)).isInstanceOf(Decision.Bound.class);
        assertThat(decisions.get(1)).isInstanceOfSatisfying(Decision.Unschedulable.class,
                u -> assertThat(u.message()).isEqualTo("0/1 nodes are available: 1 Insufficient nvidia.com/gpu."));
        assertThat(client.pods().inNamespace("default").withName("high").get().getSpec().getNodeName()).isEqualTo("gpu-1");
        assertThat(client.pods().inNamespace("default").withName("low").get().getSpec().getNodeName()).isNull();
        assertThat(client.v1().events().inNamespace("default").list().getItems())
                .extracting(e -> e.getInvolvedObject().getName() + " " + e.getReason())
                .containsExactlyInAnyOrder("high Scheduled", "low FailedScheduling");
    }

    @Test
    void takesPodsOfEqualPriorityInTheOrderTheyWereCreatedNotByName() {
        // Two job controllers create their pods at once, interleaved; the API server stamps creation to the second.
        client.nodes().resource(node("gpu-1", 4)).create();
        client.nodes().resource(node("gpu-2", 4)).create();
        var created = List.of("b-master-0", "a-master-0", "b-worker-0", "a-worker-0");
        created.forEach(name -> client.pods().resource(pod(name, 4, 0)).create());
        var driver = new SchedulerDriver(client, new SchedulerSettings("hetgpu-scheduler", 100, List.of()), HttpClient.newHttpClient(), 1);

        var decisions = driver.scheduleRound();

        assertThat(decisions).extracting(Decision::pod).containsExactlyElementsOf(created.stream().map(name -> "default/" + name).toList());
        // kube-scheduler alone: each job's first pod takes a node, and neither job's second pod fits.
        assertThat(decisions).extracting(decision -> decision.getClass().getSimpleName())
                .containsExactly("Bound", "Bound", "Unschedulable", "Unschedulable");
    }

    @Test
    void withBackoffAPodThatFailedWaitsBeforeItIsTriedAgain() {
        client.nodes().resource(node("gpu-1", 2)).create();
        client.pods().resource(pod("too-big", 4, 0)).create();
        var driver = new SchedulerDriver(client, new SchedulerSettings("hetgpu-scheduler", 100, List.of()), HttpClient.newHttpClient(), 1)
                .backingOff(java.time.Duration.ofMinutes(5), java.time.Duration.ofMinutes(10));

        assertThat(driver.scheduleRound()).singleElement().isInstanceOf(Decision.Unschedulable.class);
        client.pods().resource(pod("fits", 2, 0)).create();

        assertThat(driver.scheduleRound()).extracting(Decision::pod).containsExactly("default/fits");
    }

    @Test
    void leavesPodsOfOtherSchedulersAlone() {
        client.nodes().resource(node("gpu-1", 2)).create();
        var other = pod("other", 1, 0);
        other.getSpec().setSchedulerName("default-scheduler");
        client.pods().resource(other).create();

        var decisions = new SchedulerDriver(client, new SchedulerSettings("hetgpu-scheduler", 100, List.of()), HttpClient.newHttpClient(), 1)
                .scheduleRound();

        assertThat(decisions).isEmpty();
    }
}
