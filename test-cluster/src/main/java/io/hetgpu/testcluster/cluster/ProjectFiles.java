package io.hetgpu.testcluster.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Finds the checkout's {@code manifests/} folder from wherever the test cluster runs (repo root or a module). */
public final class ProjectFiles {

    private ProjectFiles() {
    }

    public static Path manifests() throws IOException {
        var dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            var candidate = dir.resolve("manifests");
            if (Files.isRegularFile(candidate.resolve("kustomization.yaml"))) {
                return candidate;
            }
            dir = dir.getParent();
        }
        throw new IOException("manifests/kustomization.yaml not found above " + Path.of("").toAbsolutePath()
                + "; run the test cluster from the hetgpu checkout");
    }
}
