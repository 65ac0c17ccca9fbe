package io.hetgpu.extender.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.extender.TestNodes;
import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.CardModel;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FeatureDiscoveryReaderTest {

    /**
     * The product labels GFD writes (NVML's name, spaces to dashes) name the same model as hetgpu's inventory
     * does from NVML's name itself, so a pod's {@code hetgpu.io/gpu-models} means the same card on both kinds of node.
     */
    @ParameterizedTest
    @CsvSource({
            "Tesla-K80,                         Tesla K80,                     K80",
            "Tesla-P100-PCIE-16GB,              Tesla P100-PCIE-16GB,          P100",
            "Tesla-P100-SXM2-16GB,              Tesla P100-SXM2-16GB,          P100",
            "Tesla-V100-SXM2-16GB,              Tesla V100-SXM2-16GB,          V100",
            "Tesla-V100-PCIE-32GB,              Tesla V100-PCIE-32GB,          V100",
            "Tesla-V100S-PCIE-32GB,             Tesla V100S-PCIE-32GB,         V100S",
            "Tesla-T4,                          Tesla T4,                      T4",
            "NVIDIA-A100-SXM4-40GB,             NVIDIA A100-SXM4-40GB,         A100",
            "NVIDIA-A100-SXM4-80GB,             NVIDIA A100-SXM4-80GB,         A100",
            "NVIDIA-A100-80GB-PCIe,             NVIDIA A100 80GB PCIe,         A100",
            "NVIDIA-H100-80GB-HBM3,             NVIDIA H100 80GB HBM3,         H100",
            "NVIDIA-H100-PCIe,                  NVIDIA H100 PCIe,              H100",
            "NVIDIA-L40S,                       NVIDIA L40S,                   L40S",
            "NVIDIA-RTX-A6000,                  NVIDIA RTX A6000,              RTX-A6000",
            "NVIDIA-GeForce-RTX-4090,           NVIDIA GeForce RTX 4090,       RTX-4090",
            "NVIDIA-A10G,                       NVIDIA A10G,                   A10G",
            "Tesla-V100-SXM2-16GB-SHARED,       Tesla V100-SXM2-16GB,          V100"})
    void productLabelsNameTheModelNvmlsNameDoes(String label, String nvmlName, String model) {
        assertThat(FeatureDiscoveryReader.modelOf(label)).isEqualTo(model);
        assertThat(CardModel.fromProductName(nvmlName)).isEqualTo(model);
    }

    @Test
    void readsEveryLabelGfdWritesForAV100Box() {
        var labels = TestNodes.gfdLabels("Tesla-V100-SXM2-16GB", 16160, 7, 0, 8);

        var read = FeatureDiscoveryReader.read(labels, 8, "").orElseThrow();

        assertThat(read.model()).isEqualTo("V100");
        assertThat(read.memoryMiB()).isEqualTo(16160);
        assertThat(read.computeCapability()).isEqualTo(new ComputeCapability(7, 0));
        assertThat(read.count()).isEqualTo(8);
        assertThat(read.replicas()).isEqualTo(1);
        assertThat(read.knowsNvlink()).isFalse();
        assertThat(read.describe()).isEqualTo("from GPU Feature Discovery labels, links unknown");
    }

    @Test
    void aCliqueLabelPutsTheNodesGpusOnOneNvlinkFabric() {
        var labels = TestNodes.gfdLabels("NVIDIA-GB200", 189471, 10, 0, 4);
        labels.put("nvidia.com/gpu.clique", "7b5f2b7e-3bb1-4d3a-9d3c-0b6a1c8d2e11.32766");

        assertThat(FeatureDiscoveryReader.read(labels, 4, "").orElseThrow().knowsNvlink()).isTrue();
    }

    @Test
    void sharedGpusAreNotWholeOnesAndTheirLinksAreUnknownEvenInAClique() {
        var labels = TestNodes.gfdLabels("NVIDIA-A100-SXM4-80GB-SHARED", 81920, 8, 0, 8);
        labels.put("nvidia.com/gpu.replicas", "4");
        labels.put("nvidia.com/gpu.clique", "c.1");

        var read = FeatureDiscoveryReader.read(labels, 32, "").orElseThrow();

        assertThat(read.model()).isEqualTo("A100");
        assertThat(read.replicas()).isEqualTo(4);
        assertThat(read.knowsNvlink()).isFalse();
        assertThat(read.describe()).contains("each GPU shared 4 ways");
    }

    @Test
    void aNodeGfdHasNotLabelledHasNoReading() {
        assertThat(FeatureDiscoveryReader.read(Map.of("kubernetes.io/hostname", "n"), 2, "")).isEmpty();
    }

    @Test
    void migSlicesAreRefusedAsWholeGpus() {
        var labels = TestNodes.gfdLabels("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", 4864, 8, 0, 7);

        assertThatThrownBy(() -> FeatureDiscoveryReader.read(labels, 7, ""))
                .hasMessage("nvidia.com/gpu.product: \"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb\" names MIG slices (mig-strategy single), not whole GPUs");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "nvidia.com/gpu.memory|16GB|nvidia.com/gpu.memory: expected memory of one GPU in MiB such as 16160, got \"16GB\"",
            "nvidia.com/gpu.memory|0|nvidia.com/gpu.memory: expected the memory of one GPU in MiB, got \"0\"",
            "nvidia.com/gpu.compute.major|seven|nvidia.com/gpu.compute.major: expected compute capability major number such as 8, got \"seven\"",
            "nvidia.com/gpu.compute.minor|-1|nvidia.com/gpu.compute.minor: expected compute capability minor number such as 0, got \"-1\"",
            "nvidia.com/gpu.replicas|many|nvidia.com/gpu.replicas: expected replicas per GPU such as 1, got \"many\"",
            "nvidia.com/gpu.product|---|nvidia.com/gpu.product: expected a product name such as Tesla-V100-SXM2-16GB, got \"---\""})
    void aMalformedLabelIsNamedWithItsValue(String key, String value, String message) {
        var labels = TestNodes.gfdLabels("Tesla-V100-SXM2-16GB", 16160, 7, 0, 8);
        labels.put(key, value);

        assertThatThrownBy(() -> FeatureDiscoveryReader.read(labels, 8, "")).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    }

    @Test
    void aMissingMemoryLabelIsNamed() {
        var labels = new HashMap<>(TestNodes.gfdLabels("Tesla-T4", 15360, 7, 5, 4));
        labels.remove("nvidia.com/gpu.memory");

        assertThatThrownBy(() -> FeatureDiscoveryReader.read(labels, 4, ""))
                .hasMessage("nvidia.com/gpu.memory: missing (expected memory of one GPU in MiB such as 16160)");
    }
}
