package io.hetgpu.testcluster.kubelet;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A simulated node's kubelet folders, laid out as on a real node under a temporary root:
 * {@code device-plugins/} (kubelet.sock and the plugins' sockets), {@code pod-resources/kubelet.sock},
 * {@code plugins_registry/} (where DRA drivers' registration sockets appear), {@code plugins/} (their own folders) and
 * {@code cdi/} (the container runtime's CDI specs).
 */
public record KubeletFolders(Path devicePlugins, Path podResourcesSocket, Path pluginsRegistry, Path plugins, Path cdi) {

    public static KubeletFolders under(Path root) throws IOException {
        var devicePlugins = Files.createDirectories(root.resolve("device-plugins"));
        var podResources = Files.createDirectories(root.resolve("pod-resources"));
        return new KubeletFolders(devicePlugins, podResources.resolve("kubelet.sock"),
                Files.createDirectories(root.resolve("plugins_registry")), Files.createDirectories(root.resolve("plugins")),
                Files.createDirectories(root.resolve("cdi")));
    }
}
