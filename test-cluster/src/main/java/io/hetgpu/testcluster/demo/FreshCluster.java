package io.hetgpu.testcluster.demo;

import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.TestCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;

/** Each run of the demo on a test cluster of its own, its sockets in a folder of their own that is removed afterwards. */
final class FreshCluster {

    /** What a run does on its cluster. */
    @FunctionalInterface
    interface Run<T> {
        T on(TestCluster cluster) throws IOException, GpuDiscoveryException, InventoryFormatException;
    }

    private FreshCluster() {
    }

    /** Starts a cluster of {@code nodes}, does {@code run} on it, and stops it; its progress lines begin with {@code label}. */
    static <T> T run(String label, List<NodeSpec> nodes, Consumer<String> progress, Run<T> run)
            throws IOException, GpuDiscoveryException, InventoryFormatException {
        var workDir = Files.createTempDirectory("hetgpu-demo-");
        try (var cluster = TestCluster.start(nodes, workDir, message -> progress.accept(label + ": " + message))) {
            return run.on(cluster);
        } finally {
            deleteRecursively(workDir);
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (var files = Files.walk(dir)) {
            for (var file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        }
    }
}
