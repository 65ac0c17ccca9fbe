package io.hetgpu.testcluster.manifests;

import com.marcnuri.helm.Helm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * charts/hetgpu rendered by Helm's own engine: helm-java wraps Helm's Go library, so this is what
 * {@code helm template} prints, values.schema.json checked and {@code .Capabilities.KubeVersion} set as
 * {@code --kube-version} sets it. The release record's namespace is {@code default}, as a plain
 * {@code helm install} leaves it; the chart puts its objects in {@code namespace.name}.
 */
final class HelmChart {

    /** Tests run in the module's folder; the chart sits beside it. */
    static final Path CHART = Path.of("..", "charts", "hetgpu");
    static final Path README = CHART.resolve("README.md");
    static final Path VALUES = CHART.resolve("values.yaml");

    private HelmChart() {
    }

    /** {@code helm template hetgpu charts/hetgpu --kube-version KUBE -f VALUES}; VALUES is YAML text, "" for the defaults. */
    static Rendering render(String kubeVersion, String values) {
        return Rendering.parse(CHART, template(kubeVersion, values));
    }

    /** The error Helm answers a render with, or an AssertionError when it renders. */
    static String refusal(String kubeVersion, String values) {
        try {
            template(kubeVersion, values);
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
        throw new AssertionError("Helm rendered the chart with these values instead of refusing them:\n" + values);
    }

    private static String template(String kubeVersion, String values) {
        try {
            var file = Files.createTempFile("hetgpu-values", ".yaml");
            try {
                Files.writeString(file, values);
                return new Helm(CHART).template().withName("hetgpu").withNamespace("default").withKubeVersion(kubeVersion)
                        .withValuesFile(file).call();
            } finally {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
