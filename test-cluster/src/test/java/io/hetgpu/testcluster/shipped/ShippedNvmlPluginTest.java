package io.hetgpu.testcluster.shipped;

import static io.hetgpu.testcluster.shipped.ShippedArtifacts.DEVICE_PLUGIN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.abort;

import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.InventoryCodec;
import io.hetgpu.nvml.StandInDriver;
import io.hetgpu.testcluster.kubelet.SimulatedKubelet;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The device plugin jar as the base DaemonSet runs it on a real GPU node ({@code --gpu-source=nvml}, its arguments,
 * environment and JVM options as rendered), on a machine without a GPU: the driver is the {@link StandInDriver}, which
 * the loader finds as it finds the one the NVIDIA container runtime mounts; without a C compiler to build it, the test
 * is skipped, saying so. So the shipped path through JavaCPP's
 * bindings (extracting them, loading them against {@code libnvidia-ml.so.1}, probing for functions an old driver lacks,
 * reading every device) runs on every build, not only where a GPU machine is lent.
 */
@ExtendWith(ShippedClusterExtension.class)
class ShippedNvmlPluginTest {

    private static final Duration START = Duration.ofSeconds(60);

    private final ShippedCluster cluster;
    private final SimulatedKubelet kubelet;

    ShippedNvmlPluginTest(ShippedCluster cluster) {
        this.cluster = cluster;
        this.kubelet = cluster.kubelet;
    }

    @Test
    void theDevicePluginJarReadsTheDriversGpusThroughNvmlAndPublishesThem(@TempDir Path driver) throws Exception {
        Path libraries;
        try {
            libraries = StandInDriver.build(ShippedArtifacts.checkout(), driver);
        } catch (StandInDriver.NoCompiler e) {
            abort(e.getMessage());
            return;
        }
        var pod = cluster.nvmlPluginPod();
        try (var plugin = cluster.start(DEVICE_PLUGIN, pod, "nvml-device-plugin.log", Map.of("LD_LIBRARY_PATH", libraries.toString()))) {
            await("the device plugin registers with kubelet and writes its Node").atMost(START)
                    .failFast("the device plugin exited", JarProcess.stillRunning(plugin))
                    .untilAsserted(() -> {
                        assertThat(kubelet.registrations()).as(plugin::describe).isNotEmpty();
                        var node = cluster.client.nodes().withName(ShippedCluster.GPU_NODE).get();
                        assertThat(node.getMetadata().getLabels()).as(plugin::describe)
                                .containsEntry(HetgpuKeys.LABEL_GPU_MODEL, "K80")
                                .containsEntry(HetgpuKeys.LABEL_GPU_COUNT, "2");
                        assertThat(node.getStatus().getAllocatable()).containsEntry(HetgpuKeys.DEFAULT_RESOURCE_NAME, new Quantity("2"));
                    });
            var inventory = new InventoryCodec().decode(cluster.client.nodes().withName(ShippedCluster.GPU_NODE).get()
                    .getMetadata().getAnnotations().get(HetgpuKeys.ANNOTATION_INVENTORY));
            assertThat(inventory.driverVersion()).isEqualTo("470.256.02");
            assertThat(inventory.devices()).extracting(device -> device.uuid())
                    .containsExactly("GPU-fake0000-0000-0000-0000-000000000000", "GPU-fake0000-0000-0000-0000-000000000001");
            assertThat(inventory.devices()).allMatch(device -> device.memoryMiB() == 11441);

            assertThat(plugin.output()).as("start-up log").contains("2 GPUs from nvml (driver 470.256.02, CUDA 11.4)")
                    .doesNotContain("Exception").doesNotContain("sun.misc.Unsafe");
            plugin.stop();
            assertThat(plugin.output()).contains("Stopping (signal received)");
        }
    }
}
