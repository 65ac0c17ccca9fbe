package io.hetgpu.testcluster.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.profile.SimulatedGpuSource;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HostChoiceTest {

    @Test
    void saysKubeSchedulersOwnScoresDecidedBetweenNodesTheExtenderTied() {
        // serving-0: the extender scores every CPU node 10; the parameter servers already sit on cpu-a1.
        var choice = HostChoice.of("cpu-b1", Map.of("cpu-a1", 681L, "cpu-b1", 693L, "cpu-c1", 693L),
                Map.of("cpu-a1", 181L, "cpu-b1", 193L, "cpu-c1", 193L), 5);

        assertThat(choice.extender()).containsEntry("cpu-a1", 10L).containsEntry("cpu-b1", 10L);
        assertThat(choice.extenderBest()).isEqualTo("cpu-a1");
        assertThat(choice.detour()).hasValue("went to cpu-b1, not cpu-a1: the extender scored both 10/10 (x weight 5 x 10 = +500 each); "
                + "kube-scheduler's own scores (least allocated + balanced cpu/memory, 0-200) 193 vs 181; total 693 vs 681");
    }

    @Test
    void saysWhenKubeSchedulersScoresOutweighedTheExtenders() {
        var choice = HostChoice.of("b", Map.of("a", 100L + 450, "b", 200L + 400), Map.of("a", 100L, "b", 200L), 5);

        assertThat(choice.detour()).hasValueSatisfying(line -> assertThat(line)
                .startsWith("went to b, not a: the extender scored 8/10 vs 9/10 (x weight 5 x 10 = +400 vs +450)")
                .endsWith("200 vs 100; total 600 vs 550"));
    }

    @Test
    void namesTheTieBreakWhenTotalsAreEqual() {
        var choice = HostChoice.of("k80-2", Map.of("k80-1", 690L, "k80-2", 690L), Map.of("k80-1", 190L, "k80-2", 190L), 5);

        assertThat(choice.detour()).hasValueSatisfying(line -> assertThat(line)
                .endsWith("totals tie at 690 and kube-scheduler breaks ties at random (seeded)"));
    }

    @Test
    void saysNothingWhenThePodIsOnTheExtendersBest() {
        var choice = HostChoice.of("a", Map.of("a", 690L, "b", 590L), Map.of("a", 190L, "b", 190L), 5);

        assertThat(choice.detour()).isEmpty();
    }

    @Test
    void describesWhatAPodAsksOfItsGpus() {
        var bert = new PodBuilder().withNewMetadata().withName("bert")
                .addToAnnotations(HetgpuKeys.POD_INTERCONNECT, "nvlink").addToAnnotations(HetgpuKeys.POD_MIN_GPU_MEMORY, "40Gi").endMetadata()
                .withNewSpec().addNewContainer().withName("main").withNewResources()
                .addToLimits(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity("8")).endResources().endContainer().endSpec().build();
        var serving = new PodBuilder().withNewMetadata().withName("serving").endMetadata()
                .withNewSpec().addNewContainer().withName("main").endContainer().endSpec().build();

        assertThat(PlacementReader.request(bert, "high")).isEqualTo("8 GPUs, NVLink, >= 40Gi per GPU, newest card first");
        assertThat(PlacementReader.request(bert, "low")).endsWith("oldest card that fits");
        assertThat(PlacementReader.request(serving, "normal")).isEqualTo("no GPU (a CPU node first)");
    }

    @Test
    void describesHowANodesGpusAreJoined() throws Exception {
        assertThat(interconnect("dgx-h100")).isEqualTo("NVSwitch, 18 NVLinks per GPU");
        assertThat(interconnect("k80-4x")).isEqualTo("PCIe only");
        assertThat(interconnect("dgx1-v100")).startsWith("NVLink on 16 of 28 GPU pairs");
    }

    private static String interconnect(String profile) throws Exception {
        try (var source = SimulatedGpuSource.open(profile, "node")) {
            return PlacementReader.interconnect(source.topology());
        }
    }
}
