package io.hetgpu.gpu.tier;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.GpuArchitecture;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.profile.ProfileLoader;
import java.util.ArrayList;
import java.util.List;
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
        return mixed.devices().stream().filter(device -> cards.admits(device, catalog)).filter(device -> device.model().equals(model)).count();
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
        assertThat(mixed.devices()).allMatch(device -> CardRequirements.ANY.admits(device, catalog));
    }

    @Test
    void memoryIsAKubernetesQuantityWithAUnitRoundedUpToWholeMebibytes() {
        assertThat(read(Map.of(HetgpuKeys.POD_MIN_GPU_MEMORY, "16000Mi")).minMemoryMiB()).isEqualTo(16000);
        assertThat(read(Map.of(HetgpuKeys.POD_MIN_GPU_MEMORY, "1.5Gi")).minMemoryMiB()).isEqualTo(1536);
        assertThat(read(Map.of(HetgpuKeys.POD_MIN_GPU_MEMORY, "40G")).minMemoryMiB()).isEqualTo(38147);
    }

    @Test
    void aMemorySizeNoCountHoldsIsAProblemNamingTheAnnotationAndTheValue() {
        var problems = new ArrayList<String>();
        var cards = CardRequirements.read(Map.of(HetgpuKeys.POD_MIN_GPU_MEMORY, "99999999999999999999999999Gi"), catalog, problems);

        assertThat(problems).containsExactly(HetgpuKeys.POD_MIN_GPU_MEMORY
                + ": \"99999999999999999999999999Gi\" is more than any GPU holds (expected a memory size such as \"32Gi\" or \"16000Mi\")");
        assertThat(cards.minMemoryMiB()).isZero();
        assertThat(read(Map.of(HetgpuKeys.POD_MIN_GPU_MEMORY, "8Ei")).minMemoryMiB()).as("the largest size that counts")
                .isEqualTo(8L << 40);
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

    @Test
    void aMinimumModelAdmitsThatCardAndEveryCardTheTableRanksAtOrAboveIt() {
        var a100OrNewer = read(Map.of(HetgpuKeys.POD_GPU_MIN_MODEL, "NVIDIA A100"));
        assertThat(a100OrNewer.minTier().model()).isEqualTo("A100");
        assertThat(admitted(a100OrNewer, "A100")).isEqualTo(2);
        assertThat(admitted(a100OrNewer, "T4")).isZero();
        // Every card of the table, by its own rank: compute capability 8.0 would also admit the A30, A10, A40, L4 and L40S.
        var admittedModels = catalog.cards().stream().filter(card -> a100OrNewer.admits(device(card), catalog)).map(KnownCard::model).toList();
        assertThat(admittedModels).containsExactly("A100", "H800", "H100", "H200", "GH200", "B200");
        // A card the table does not list is judged by the rank the table estimates for it: a 96 GiB Hopper ranks above H100.
        var unlisted = new GpuDevice("GPU-x", 0, "NVIDIA H20", "H20", GpuArchitecture.HOPPER, new ComputeCapability(9, 0), 96 * 1024,
                "0000:00:00.0", GpuDevice.NUMA_UNKNOWN, DeviceHealth.HEALTHY);
        assertThat(a100OrNewer.admits(unlisted, catalog)).isTrue();
        assertThat(read(Map.of(HetgpuKeys.POD_GPU_MIN_MODEL, "B200")).admits(unlisted, catalog)).isFalse();
    }

    @Test
    void excludedModelsAreRefusedWhateverElseAdmitsThem() {
        var noA100 = read(Map.of(HetgpuKeys.POD_MIN_COMPUTE_CAPABILITY, "7.0", HetgpuKeys.POD_GPU_EXCLUDE_MODELS, "A100, a30"));
        assertThat(noA100.excludedModels()).containsExactly("A100", "A30");
        assertThat(admitted(noA100, "A100")).isZero();
        assertThat(admitted(noA100, "T4")).isEqualTo(2);
        assertThat(noA100.isAny()).isFalse();
    }

    @Test
    void aMinimumModelIsOneModelTheTableKnows() {
        for (var bad : List.of("A100,H100", "Voodoo", " ")) {
            var problems = new ArrayList<String>();
            var cards = CardRequirements.read(Map.of(HetgpuKeys.POD_GPU_MIN_MODEL, bad), catalog, problems);
            assertThat(problems).as(bad).singleElement().satisfies(p -> assertThat(p).startsWith(HetgpuKeys.POD_GPU_MIN_MODEL + ": "));
            assertThat(cards.minTier()).isEqualTo(CardRequirements.ANY_TIER);
        }
        var problems = new ArrayList<String>();
        CardRequirements.read(Map.of(HetgpuKeys.POD_GPU_EXCLUDE_MODELS, "A100,Voodoo"), catalog, problems);
        assertThat(problems).singleElement().satisfies(p -> assertThat(p)
                .startsWith(HetgpuKeys.POD_GPU_EXCLUDE_MODELS + ": unknown card model \"Voodoo\" in \"A100,Voodoo\""));
    }

    private static GpuDevice device(KnownCard card) {
        return new GpuDevice("GPU-" + card.model(), 0, card.model(), card.model(), GpuArchitecture.of(card.computeCapability()),
                card.computeCapability(), card.maxMemoryMiB(), "0000:00:00.0", GpuDevice.NUMA_UNKNOWN, DeviceHealth.HEALTHY);
    }
}
