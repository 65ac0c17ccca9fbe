package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which pods count as smaller work waiting for a node, each once, as the informer's events replace them. */
class WaitingPodsTest {

    private final WaitingPods waiting = new WaitingPods(new PodRequestParser("nvidia.com/gpu", CardCatalog.defaults()));

    private static PodBuilder pod(String uid, int gpus) {
        return new PodBuilder().withNewMetadata().withNamespace("ml").withName(uid).withUid(uid).endMetadata()
                .withNewSpec().addNewContainer().withName("main").withImage("train")
                .withNewResources().addToLimits(Map.of("nvidia.com/gpu", new Quantity(Integer.toString(gpus)))).endResources()
                .endContainer().endSpec();
    }

    private static Pod bound(Pod pod) {
        return new PodBuilder(pod).editSpec().withNodeName("n1").endSpec().build();
    }

    @Test
    void theGpusSmallerPodsWaitForAreSummedUntilTheyAreBoundOrGone() {
        assertThat(waiting.gpusBelow(8)).as("none waits").isZero();
        var two = pod("two", 2).build();
        var one = pod("one", 1).build();
        waiting.seen(two);
        waiting.seen(one);
        waiting.seen(one);
        waiting.seen(pod("four", 4).build());
        assertThat(waiting.gpusBelow(4)).as("the 4-GPU pod is not smaller than 4; one seen twice counts once").isEqualTo(3);
        assertThat(waiting.gpusBelow(2)).isEqualTo(1);
        assertThat(waiting.gpusBelow(1)).isZero();
        assertThat(waiting.gpusBelow(1_000)).isEqualTo(7);
        waiting.seen(bound(one));
        assertThat(waiting.gpusBelow(4)).as("bound: no longer waiting").isEqualTo(2);
        waiting.gone(two);
        assertThat(waiting.gpusBelow(4)).isZero();
    }

    @Test
    void podsOfJobsEndedOrDeletedPodsPodsWithoutGpusAndUnreadableOnesAreNotSmallerWork() {
        waiting.seen(pod("member", 1).editMetadata().withLabels(Map.of(HetgpuKeys.POD_JOB, "sweep")).endMetadata().build());
        waiting.seen(pod("ended", 1).withNewStatus().withPhase("Failed").endStatus().build());
        waiting.seen(pod("deleting", 1).editMetadata().withDeletionTimestamp("2026-11-28T00:00:00Z").endMetadata().build());
        waiting.seen(pod("cpu", 0).build());
        waiting.seen(pod("bad", 1).editSpec().editFirstContainer().editResources()
                .addToLimits(Map.of("nvidia.com/gpu", new Quantity("100"))).endResources().endContainer().endSpec().build());
        assertThat(waiting.gpusBelow(64)).isZero();
    }

    @Test
    void aPodThatChangesSizeOrStopsWaitingIsCountedAsItIsNow() {
        waiting.seen(pod("p", 1).build());
        waiting.seen(pod("p", 4).build());
        assertThat(waiting.gpusBelow(8)).isEqualTo(4);
        waiting.seen(pod("p", 4).withNewStatus().withPhase("Succeeded").endStatus().build());
        assertThat(waiting.gpusBelow(8)).isZero();
    }
}
