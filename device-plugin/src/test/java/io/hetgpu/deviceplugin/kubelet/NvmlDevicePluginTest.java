package io.hetgpu.deviceplugin.kubelet;

import io.hetgpu.deviceplugin.ThisMachinesGpus;
import io.hetgpu.deviceplugin.api.v1beta1.Device;
import io.hetgpu.deviceplugin.devices.DeviceListStrategy;
import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.deviceplugin.node.NodeInventory;
import io.hetgpu.deviceplugin.node.NodeMetadata;
import io.hetgpu.deviceplugin.status.PluginMetrics;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.tier.CardCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The plugin on this machine's real GPUs, through NVML, against the kubelet stand-in. Skipped where
 * NVML cannot open; on a GPU node it prints what ListAndWatch and the inventory annotation carried
 * (target/surefire-reports/*NvmlDevicePluginTest-output.txt).
 */
class NvmlDevicePluginTest {

    @TempDir
    Path temp;

    @Test
    void listAndWatchAndInventoryCarryTheRealGpus() throws Exception {
        var source = ThisMachinesGpus.nvmlOrSkip();
        var folder = Files.createDirectory(temp.resolve("device-plugins"));
        var inventory = new GpuInventory(source.topology());
        try (source; var transport = new UnixSocketTransport();
             var kubelet = new KubeletStandIn(folder, temp.resolve("pod-resources.sock")).start();
             var endpoint = new DevicePluginEndpoint(transport, folder, "nvidia.com/gpu",
                     new DevicePluginService(inventory, Set.of(DeviceListStrategy.ENVVAR), PluginMetrics.unscraped(inventory), ids -> { }),
                     PluginMetrics.unscraped(inventory))) {
            endpoint.start();
            kubelet.nextRegistration();
            await().atMost(Duration.ofSeconds(10)).until(() -> !kubelet.deviceLists().isEmpty());

            var list = kubelet.deviceLists().get(0);
            System.out.println("ListAndWatch sent:\n" + list);
            var inventoryAnnotation = new NodeInventory(CardCatalog.defaults(), Duration.ofMinutes(1))
                    .desired(source.topology(), Optional.of(Set.of()), Instant.now(), new NodeMetadata(Map.of(), Map.of()));
            System.out.println("Node labels: " + inventoryAnnotation.labels());
            System.out.println("Node annotations: " + inventoryAnnotation.annotations());

            assertThat(list.getDevicesList()).extracting(Device::getID)
                    .containsExactlyElementsOf(source.topology().devices().stream().map(GpuDevice::uuid).toList());
        }
    }
}
