package io.hetgpu.gpu.tier;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.profile.ProfileLoader;
import java.util.ArrayList;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CardRequirementsTest {

    private final CardCatalog catalog = CardCatalog.defaults();
    /** 2 A100 (40 GiB, 8.0) joined by NVLink and 2 T4 (15 GiB, 7.5). */
    private final io.hetgpu.gpu.NodeTopology mixed = mixed();

    private static io.hetgpu.gpu.NodeTopology mixed() {
        try {
            return ProfileLoader.load("mixed").topology("n1");
        } catch (io.hetgpu.gpu.profile.ProfileFormatException e) {
            throw new IllegalStateException(e);
        }
    }

    private CardRequirements read(Map<String, String> annotations) {
        var problems = new ArrayList<String>();
        var cards = CardRequirements.read(annotations, catalog, problems);
        assertThat(problems).isEmpty();
        return cards;
    }

    private long admitted(CardRequirements cards, String model) {
        return mixed.devices().stream().filter(cards::admits).filter(device -> device.model().equals(model)).count();
    }

    @Test
    void eachRequirementAdmitsTheCardsThatMeetIt() {
        var bigMemory = read(Map.of(HetgpuKeys.POD_MIN_GPU_MEMORY, "32Gi"));
        assertThat(bigMemory.minMemoryMiB()).isEqualTo(32 * 1024);
        assertThat(admitted(bigMemory, "A100")).isEqualTo(2);
        assertThat(admitted(bigMemory, "T4")).isZero();

        var t4 = read(Map.of(HetgpuKeys.POD_GPU_MODELS, "Tesla T4"));
        assertThat(t4.models()).containsExactly("T4");
        assertThat(admitted(t4, "A100")).isZero();
        assertThat(admitted(t4, "T4")).isEqualTo(2);

        var ampere = read(Map.of(HetgpuKeys.POD_MIN_COMPUTE_CAPABILITY, "8.0"));
        assertThat(ampere.minComputeCapability()).isEqualTo(new ComputeCapability(8, 0));
        assertThat(admitted(ampere, "A100")).isEqualTo(2);
        assertThat(admitted(ampere, "T4")).isZero();

        assertThat(read(Map.of()).isAny()).isTrue();
        assertThat(mixed.devices()).allMatch(CardRequirements.ANY::admits);
    }

    @Test
    void memoryIsAKubernetesQuantityWithAUnitRoundedUpToWholeMebibytes() {
        assertThat(read(Map.of(HetgpuKeys.POD_MIN_GPU_MEMORY, "16000Mi")).minMemoryMiB()).isEqualTo(16000);
        assertThat(read(Map.of(HetgpuKeys.POD_MIN_GPU_MEMORY, "1.5Gi")).minMemoryMiB()).isEqualTo(1536);
        assertThat(read(Map.of(HetgpuKeys.POD_MIN_GPU_MEMORY, "40G")).minMemoryMiB()).isEqualTo(38147);
    }

    @Test
    void everyBadValueIsAProblemNamingTheAnnotationAndTheValueAndCountsAsAny() {
        var problems = new ArrayList<String>();
        var cards = CardRequirements.read(Map.of(HetgpuKeys.POD_MIN_GPU_MEMORY, "32", HetgpuKeys.POD_GPU_MODELS, "A100,Voodoo",
                HetgpuKeys.POD_MIN_COMPUTE_CAPABILITY, "eight"), catalog, problems);

        assertThat(problems).hasSize(3);
        assertThat(problems).anySatisfy(p -> assertThat(p).startsWith(HetgpuKeys.POD_MIN_GPU_MEMORY + ": ").contains("\"32\""));
        assertThat(problems).anySatisfy(p -> assertThat(p).startsWith(HetgpuKeys.POD_GPU_MODELS + ": unknown card model \"Voodoo\""));
        assertThat(problems).anySatisfy(p -> assertThat(p).startsWith(HetgpuKeys.POD_MIN_COMPUTE_CAPABILITY + ": ").contains("\"eight\""));
        assertThat(cards.minMemoryMiB()).isZero();
        assertThat(cards.minComputeCapability()).isEqualTo(CardRequirements.ANY_COMPUTE_CAPABILITY);
    }
}
