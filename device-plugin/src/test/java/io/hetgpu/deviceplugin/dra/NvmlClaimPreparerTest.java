package io.hetgpu.deviceplugin.dra;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.hetgpu.deviceplugin.ThisMachinesGpus;
import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.inventory.HetgpuDra;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * hetgpu's DRA driver preparing a claim for this machine's real GPUs, through NVML: the CDI spec it writes names device
 * nodes that exist here as character devices, the GPU's node numbered as the driver numbers it, and the GPUs' real UUIDs.
 * Skipped where NVML cannot open; on a GPU node it prints the spec (target/surefire-reports/*NvmlClaimPreparerTest-output.txt).
 */
class NvmlClaimPreparerTest {

    private static final String NODE = "gpu-node";

    @TempDir
    Path temp;

    @Test
    void aClaimForEveryGpuGetsACdiSpecOfThisMachinesDeviceNodes() throws Exception {
        var source = ThisMachinesGpus.nvmlOrSkip();
        try (source) {
            var devices = source.topology().devices();
            var results = new ArrayList<io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult>();
            for (int position = 0; position < devices.size(); position++) {
                results.add(new DeviceRequestAllocationResultBuilder().withDriver(HetgpuDra.DRIVER).withPool(HetgpuDra.pool(NODE))
                        .withDevice(HetgpuDra.deviceName(position)).withRequest("gpus").build());
            }
            var claim = new ResourceClaimBuilder().withNewMetadata().withName("all-gpus").withNamespace("default").withUid("uid-all")
                    .endMetadata().withNewStatus().withNewAllocation().withNewDevices().withResults(results).endDevices()
                    .endAllocation().endStatus().build();
            var cdi = Files.createDirectories(temp.resolve("cdi"));
            var preparer = new ClaimPreparer(new ClaimPreparer.Settings(HetgpuDra.DRIVER, NODE, cdi, 8),
                    new GpuInventory(source.topology()), (namespace, name) -> claim,
                    Checkpoint.open(Files.createDirectories(temp.resolve("plugin")), 16), DraMetrics.unscraped());

            var answer = preparer.prepare(List.of(new ClaimRef("default", "all-gpus", "uid-all"))).get("uid-all");

            assertThat(answer).isInstanceOf(ClaimResult.Prepared.class);
            var specFile = cdi.resolve(CdiSpec.fileName(HetgpuDra.DRIVER, "uid-all"));
            System.out.println("CDI spec written: " + Files.readString(specFile));
            JsonNode spec = new ObjectMapper().readTree(specFile.toFile());
            var nodes = new ArrayList<String>();
            spec.at("/containerEdits/deviceNodes").forEach(node -> nodes.add(node.path("path").asText()));
            var gpuNodes = new ArrayList<String>();
            spec.path("devices").forEach(device -> device.at("/containerEdits/deviceNodes").forEach(node -> gpuNodes.add(node.path("path").asText())));
            nodes.addAll(gpuNodes);
            for (var path : nodes) {
                var file = Path.of(path);
                assertThat(file).as("the spec's device node %s on this machine", path).exists();
                System.out.printf("%s: character device %d:%d%n", path, major(file), minor(file));
            }
            assertThat(gpuNodes).hasSameSizeAs(devices);
            for (var device : devices) {
                assertThat(minor(Path.of("/dev/nvidia" + device.index()))).as("the driver's minor number of GPU %d", device.index())
                        .isEqualTo(device.index());
            }
            assertThat(spec.at("/containerEdits/env/0").asText())
                    .isEqualTo("NVIDIA_VISIBLE_DEVICES=" + String.join(",", devices.stream().map(GpuDevice::uuid).toList()));
        }
    }

    /** The device number as Linux encodes it (dev_t): major in bits 8-19, minor in bits 0-7 and 20-31. */
    private static long rdev(Path file) throws java.io.IOException {
        return ((Number) Files.getAttribute(file, "unix:rdev")).longValue();
    }

    private static long major(Path file) throws java.io.IOException {
        long rdev = rdev(file);
        return ((rdev >>> 8) & 0xfff) | ((rdev >>> 32) & ~0xfffL);
    }

    private static long minor(Path file) throws java.io.IOException {
        long rdev = rdev(file);
        return (rdev & 0xff) | ((rdev >>> 12) & ~0xffL);
    }
}
