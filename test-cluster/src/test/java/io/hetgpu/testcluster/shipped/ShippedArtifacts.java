package io.hetgpu.testcluster.shipped;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hetgpu.testcluster.cluster.ProjectFiles;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The two programs as they ship: the shaded jars the Dockerfiles copy, and the JVM options of the
 * Dockerfiles' ENTRYPOINT. Nothing here comes from the test classpath.
 */
enum ShippedArtifacts {
    DEVICE_PLUGIN("device-plugin", "hetgpu-device-plugin.jar", "io.hetgpu.deviceplugin.DevicePluginMain"),
    SCHEDULER_EXTENDER("scheduler-extender", "hetgpu-scheduler-extender.jar", "io.hetgpu.extender.ExtenderMain");

    private final String module;
    private final String jarName;
    private final String mainClass;

    ShippedArtifacts(String module, String jarName, String mainClass) {
        this.module = module;
        this.jarName = jarName;
        this.mainClass = mainClass;
    }

    String module() {
        return module;
    }

    String mainClass() {
        return mainClass;
    }

    /** The shaded jar; `mvn verify` (./hetgpu test) builds it before this module's tests run. */
    Path jar() {
        var jar = checkout().resolve(module).resolve("target").resolve(jarName);
        if (!Files.isRegularFile(jar)) {
            throw new AssertionError(jar + " is missing: build the shipped jars first (./hetgpu test, or ./hetgpu mvn package)");
        }
        return jar;
    }

    Path dockerfile() {
        return checkout().resolve(module).resolve("Dockerfile");
    }

    /**
     * The JVM options between {@code java} and {@code -jar} in the Dockerfile's ENTRYPOINT (exec form),
     * less the ones that name files only the image build creates (the AOT cache).
     */
    List<String> dockerJvmOptions() {
        var entrypoint = entrypoint();
        if (entrypoint.isEmpty() || !entrypoint.getFirst().equals("java") || !entrypoint.contains("-jar")) {
            throw new AssertionError(dockerfile() + ": ENTRYPOINT should be [\"java\", ..., \"-jar\", JAR], got " + entrypoint);
        }
        var options = new ArrayList<String>();
        for (String word : entrypoint.subList(1, entrypoint.indexOf("-jar"))) {
            if (!word.startsWith("-XX:AOTCache=")) {
                options.add(word);
            }
        }
        return options;
    }

    /** The Dockerfile's AOT cache training runs: each RUN instruction that names {@code -XX:AOTCacheOutput=}, continuations joined. */
    List<String> trainingRuns() {
        try {
            return Files.readString(dockerfile()).replace("\\\n", " ").lines()
                    .filter(line -> line.startsWith("RUN ") && line.contains("-XX:AOTCacheOutput=")).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The words of the ENTRYPOINT instruction (JSON exec form, as Docker recommends for signal delivery). */
    List<String> entrypoint() {
        try {
            for (String line : Files.readAllLines(dockerfile())) {
                if (line.startsWith("ENTRYPOINT ")) {
                    var words = new ObjectMapper().readTree(line.substring("ENTRYPOINT ".length()));
                    var list = new ArrayList<String>();
                    words.forEach(word -> list.add(word.asText()));
                    return list;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new AssertionError(dockerfile() + " has no ENTRYPOINT");
    }

    static Path checkout() {
        try {
            return ProjectFiles.manifests().getParent();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
