package io.hetgpu.testcluster.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.hetgpu.extender.Extender;
import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.testcluster.scheduler.ExtenderSettings;
import io.hetgpu.testcluster.scheduler.SchedulerSettings;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.BiPredicate;
import java.util.stream.Stream;

/**
 * The configuration a real cluster runs, read from {@code manifests/base/}: the extender's config file
 * (ConfigMap key {@value #EXTENDER_CONFIG_KEY}) and hetgpu-scheduler's KubeSchedulerConfiguration. The
 * test cluster changes only addresses (ports on loopback), never policy. (The manifests tests check that
 * {@code kubectl kustomize manifests/} renders these same ConfigMaps, so no kustomization changes them.)
 */
public record DeployedConfiguration(ExtenderConfig extender, SchedulerSettings scheduler) {

    public static final String EXTENDER_CONFIG_KEY = "extender.yaml";
    /** The folder of {@code manifests/} that holds the objects; the kustomizations around it add images and overlays. */
    public static final String BASE = "base";
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    /** Reads the configuration from {@code manifests}, the checkout's {@code manifests/} folder. */
    public static DeployedConfiguration load(Path manifests) throws IOException {
        var base = manifests.resolve(BASE);
        var extender = configMapValue(base, (key, text) -> key.equals(EXTENDER_CONFIG_KEY));
        var scheduler = configMapValue(base, (key, text) -> text.contains("kind: KubeSchedulerConfiguration"));
        try {
            return new DeployedConfiguration(ExtenderConfig.parse(extender.text(), extender.file() + " " + EXTENDER_CONFIG_KEY),
                    SchedulerSettings.parse(scheduler.text()));
        } catch (ExtenderConfig.ConfigException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /**
     * The scheduler settings calling {@code extender} as the shipped pod does: on the manifests' own loopback
     * address (kube-scheduler and the extender are containers of one pod), only the port being the one the test
     * cluster's extender was given (several clusters share this machine's loopback).
     */
    public SchedulerSettings schedulerCalling(Extender extender) {
        return schedulerCalling(extender, settings -> settings);
    }

    /** The same, with one setting of the extender entry changed (tests of ignorable, nodeCacheCapable…). */
    public SchedulerSettings schedulerCalling(Extender extender, java.util.function.UnaryOperator<ExtenderSettings> change) {
        return scheduler.withExtenders(scheduler.extenders().stream().map(e -> change.apply(e.at(onLoopback(e.urlPrefix(), extender.port()))))
                .toList());
    }

    private static String onLoopback(String urlPrefix, int port) {
        var url = URI.create(urlPrefix);
        try {
            if (!InetAddress.getByName(url.getHost()).isLoopbackAddress()) {
                throw new IllegalStateException("the manifests' urlPrefix " + urlPrefix + " is not the pod's loopback address: "
                        + "the test cluster runs the shipped layout, kube-scheduler and the extender in one pod");
            }
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException("the manifests' urlPrefix " + urlPrefix + " names no address", e);
        }
        return url.getScheme() + "://" + url.getHost() + ":" + port + (url.getRawPath() == null ? "" : url.getRawPath());
    }

    /** The scheduler settings with every extender pointed at {@code urlPrefix} (an extender that is not the test cluster's). */
    public SchedulerSettings schedulerCalling(String urlPrefix) {
        return scheduler.withExtenders(scheduler.extenders().stream().map(e -> e.at(urlPrefix)).toList());
    }

    /** The same, with one setting of the extender entry changed (tests of ignorable, nodeCacheCapable…). */
    public SchedulerSettings schedulerCalling(String urlPrefix, java.util.function.UnaryOperator<ExtenderSettings> change) {
        return scheduler.withExtenders(scheduler.extenders().stream().map(e -> change.apply(e.at(urlPrefix))).toList());
    }

    private record ConfigMapValue(String file, String text) {
    }

    /** The first ConfigMap data value in {@code folder} (its files in name order) that {@code wanted} accepts. */
    private static ConfigMapValue configMapValue(Path folder, BiPredicate<String, String> wanted) throws IOException {
        try (Stream<Path> files = Files.list(folder)) {
            for (var file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
                for (var document : YAML.readValues(YAML.createParser(file.toFile()), JsonNode.class).readAll()) {
                    if (document == null || !"ConfigMap".equals(document.path("kind").asText())) {
                        continue;
                    }
                    for (var entry : document.path("data").properties()) {
                        if (entry.getValue().isTextual() && wanted.test(entry.getKey(), entry.getValue().asText())) {
                            return new ConfigMapValue(BASE + "/" + file.getFileName(), entry.getValue().asText());
                        }
                    }
                }
            }
        }
        throw new IOException("no ConfigMap in " + folder + " holds the configuration looked for");
    }
}
