package io.hetgpu.testcluster.shipped;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/** Hands each test that asks for it a {@link ShippedCluster} of its own, in a folder of its own, both gone after the test. */
final class ShippedClusterExtension implements ParameterResolver {

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == ShippedCluster.class;
    }

    @Override
    public ShippedCluster resolveParameter(ParameterContext parameter, ExtensionContext context) {
        try {
            var dir = Files.createTempDirectory("hetgpu-shipped-cluster");
            var cluster = ShippedCluster.start(dir);
            context.getStore(ExtensionContext.Namespace.create(ShippedClusterExtension.class))
                    .put(cluster, (ExtensionContext.Store.CloseableResource) () -> {
                        cluster.close();
                        delete(dir);
                    });
            return cluster;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (var path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
