package io.hetgpu.deviceplugin.kubelet;

import io.grpc.StatusRuntimeException;
import io.hetgpu.deviceplugin.api.podresources.v1.ContainerDevices;
import io.hetgpu.deviceplugin.api.podresources.v1.ContainerResources;
import io.hetgpu.deviceplugin.api.podresources.v1.ListPodResourcesResponse;
import io.hetgpu.deviceplugin.api.podresources.v1.PodResources;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PodResourcesReaderTest {

    @TempDir
    Path temp;

    @Test
    void collectsOnlyOurResourceAcrossPodsAndContainers() throws Exception {
        try (var transport = new UnixSocketTransport();
             var kubelet = new KubeletStandIn(Files.createDirectory(temp.resolve("dp")), temp.resolve("pr.sock")).start();
             var reader = new PodResourcesReader(transport, temp.resolve("pr.sock"))) {
            kubelet.setPodResources(ListPodResourcesResponse.newBuilder()
                    .addPodResources(pod("a", container("main", "nvidia.com/gpu", "GPU-1", "GPU-2"), container("side", "example.com/fpga", "F-1")))
                    .addPodResources(pod("b", container("main", "nvidia.com/gpu", "GPU-7")))
                    .build());

            assertThat(reader.heldDevices("nvidia.com/gpu")).containsExactly("GPU-1", "GPU-2", "GPU-7");
        }
    }

    @Test
    void failsWhenKubeletIsNotThere() {
        try (var transport = new UnixSocketTransport(); var reader = new PodResourcesReader(transport, temp.resolve("absent.sock"))) {
            assertThatThrownBy(() -> reader.heldDevices("nvidia.com/gpu")).isInstanceOf(StatusRuntimeException.class);
        }
    }

    private static PodResources pod(String name, ContainerResources... containers) {
        var pod = PodResources.newBuilder().setName(name).setNamespace("ml");
        for (var container : containers) {
            pod.addContainers(container);
        }
        return pod.build();
    }

    private static ContainerResources container(String name, String resource, String... ids) {
        return ContainerResources.newBuilder().setName(name)
                .addDevices(ContainerDevices.newBuilder().setResourceName(resource).addAllDeviceIds(java.util.List.of(ids))).build();
    }
}
