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
