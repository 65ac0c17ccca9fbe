package io.hetgpu.testcluster.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.testcluster.scheduler.ExtenderSettings;
import io.hetgpu.testcluster.scheduler.SchedulerSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * The configuration a real cluster runs, read from {@code manifests/}: the extender's config file
 * (ConfigMap key {@value #EXTENDER_CONFIG_KEY}) and hetgpu-scheduler's KubeSchedulerConfiguration. The
 * test cluster changes only addresses (ports on loopback), never policy.
 */
public record DeployedConfiguration(ExtenderConfig extender, SchedulerSettings scheduler) {

    public static final String EXTENDER_CONFIG_KEY = "extender.yaml";
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    public static DeployedConfiguration load(Path manifests) throws IOException {
        return new DeployedConfiguration(extenderConfig(manifests), SchedulerSettings.fromManifests(manifests));
    }

    /** The scheduler settings with every extender pointed at {@code urlPrefix}. */
    public SchedulerSettings schedulerCalling(String urlPrefix) {
        return scheduler.withExtenders(scheduler.extenders().stream().map(e -> e.at(urlPrefix)).toList());
    }

    /** The same, with one setting of the extender entry changed (tests of ignorable, nodeCacheCapable…). */
    public SchedulerSettings schedulerCalling(String urlPrefix, java.util.function.UnaryOperator<ExtenderSettings> change) {
        return scheduler.withExtenders(scheduler.extenders().stream().map(e -> change.apply(e.at(urlPrefix))).toList());
    }

    private static ExtenderConfig extenderConfig(Path manifests) throws IOException {
        try (Stream<Path> files = Files.list(manifests)) {
            for (var file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
                for (var document : YAML.readValues(YAML.createParser(file.toFile()), JsonNode.class).readAll()) {
                    var text = document == null ? null : document.path("data").path(EXTENDER_CONFIG_KEY);
                    if (text != null && text.isTextual()) {
                        try {
                            return ExtenderConfig.parse(text.asText(), file.getFileName() + " " + EXTENDER_CONFIG_KEY);
                        } catch (ExtenderConfig.ConfigException e) {
                            throw new IOException(e.getMessage(), e);
                        }
                    }
                }
            }
        }
        throw new IOException("no ConfigMap with key " + EXTENDER_CONFIG_KEY + " in " + manifests);
    }
}
