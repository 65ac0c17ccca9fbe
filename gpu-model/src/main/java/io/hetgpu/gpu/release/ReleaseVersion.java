package io.hetgpu.gpu.release;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * hetgpu's version as the build wrote it (the root pom's {@code revision}), for every program's
 * {@code -V}/{@code --version}: "PROGRAM VERSION". Read from a resource rather than the jar's manifest so
 * that a program run from its classes folder (the launcher, the tests) reports the same.
 */
public final class ReleaseVersion implements IVersionProvider {

    private static final String RESOURCE = "version.properties";

    @Spec
    CommandSpec spec;

    /** The version, e.g. {@code 0.1.0}. */
    public static String current() {
        try (InputStream in = ReleaseVersion.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("io/hetgpu/gpu/release/" + RESOURCE + " is missing from the classpath: build with Maven");
            }
            var properties = new Properties();
            properties.load(in);
            String version = properties.getProperty("version", "");
            if (version.isBlank() || version.startsWith("${")) {
                throw new IllegalStateException("io/hetgpu/gpu/release/" + RESOURCE + " holds no version (\"" + version
                        + "\"): it was not filtered by Maven");
            }
            return version;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String[] getVersion() {
        return new String[] {spec.qualifiedName() + " " + current()};
    }
}
