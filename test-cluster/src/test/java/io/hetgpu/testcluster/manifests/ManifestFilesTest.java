package io.hetgpu.testcluster.manifests;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Set;
import java.util.List;

import static io.hetgpu.testcluster.manifests.ManifestTree.ROOT;
import static io.hetgpu.testcluster.manifests.ManifestTree.SAMPLES;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every manifest file parses into typed objects with known fields only: kubectl kustomize passes
 * misspelt fields through, and only the API server's strict field validation would reject them.
 */
class ManifestFilesTest {

    private final ManifestTree manifests = ManifestTree.load();

    /**
     * The API groups of the operators whose jobs the samples show (JobSet, Kubeflow's training jobs): custom resources,
     * which fabric8 has no model of; their pod templates are read as typed pods by {@code SampleJobsTest}.
     */
    private static final Set<String> SAMPLE_CUSTOM_GROUPS = Set.of("jobset.x-k8s.io", "kubeflow.org");
    /**
     * The Prometheus Operator's kinds (manifests/monitoring/): fabric8 has no model of them, so their fields cannot be
     * checked here; promtool checks the rules (MonitoringRulesTest) and the chart renders the same objects.
     */
    private static final String PROMETHEUS_OPERATOR_API = "monitoring.coreos.com/";

    /** Every document of a kind fabric8 models: neither the Prometheus Operator's nor the samples' operators'. */
    private List<ManifestDocument> kubernetesKinds() {
        return manifests.documents().stream().filter(d -> !d.object().getApiVersion().startsWith(PROMETHEUS_OPERATOR_API))
                .filter(d -> !isSampleCustomResource(d)).toList();
    }

    @Test
    void everyDocumentIsATypedKubernetesObject() {
        assertThat(manifests.documents()).hasSizeGreaterThan(20);
        for (ManifestDocument document : kubernetesKinds()) {
            assertThat(document.object())
                    .as(document.describe())
                    .isNotInstanceOf(GenericKubernetesResource.class);
            assertThat(document.object().getMetadata().getName()).as(document.describe()).isNotBlank();
        }
    }

    @Test
    void everyFieldIsKnownToTheKubernetesApi() {
        var unknown = new ArrayList<String>();
        for (ManifestDocument document : kubernetesKinds()) {
            ManifestTree.unknownFields(document).forEach(path -> unknown.add(document.describe() + " " + path));
        }
        assertThat(unknown).isEmpty();
    }

    /** Samples are applied beside an install (`kubectl apply -f manifests/samples/`): no object may replace one of hetgpu's. */
    @Test
    void noSampleSharesKindNamespaceAndNameWithAnotherObject() {
        var ids = new ArrayList<String>();
        Kubectl.kustomize(ROOT).objects().forEach(o -> ids.add(id(o)));
        manifests.in(SAMPLES).forEach(d -> ids.add(id(d.object())));
        assertThat(ids).doesNotHaveDuplicates();
    }

    private static boolean isSampleCustomResource(ManifestDocument document) {
        var apiVersion = document.object().getApiVersion();
        return document.describe().contains("/samples/") && apiVersion != null && apiVersion.contains("/")
                && SAMPLE_CUSTOM_GROUPS.contains(apiVersion.substring(0, apiVersion.indexOf('/')));
    }

    private static String id(HasMetadata object) {
        return object.getKind() + "/" + object.getMetadata().getNamespace() + "/" + object.getMetadata().getName();
    }
}
