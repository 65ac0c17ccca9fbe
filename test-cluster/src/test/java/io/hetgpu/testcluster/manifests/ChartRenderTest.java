package io.hetgpu.testcluster.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * charts/hetgpu, rendered by Helm, installs what manifests/ installs: with the default values the very
 * objects {@code kubectl kustomize manifests/} renders, with simulated profiles those of the simulated
 * overlay; kube-scheduler's image follows the cluster's version, and the admission policy is rendered
 * only where the cluster serves it.
 */
class ChartRenderTest {

    /** The kube-scheduler tag kustomize pins, without its "v": the cluster version at which both must agree. */
    private static final String KUSTOMIZE_KUBE_VERSION = ImageSetting.fromComponent().stream()
            .filter(s -> s.name().equals(ExpectedDeployment.KUBE_SCHEDULER_IMAGE)).findFirst().orElseThrow().newTag().substring(1);

    @Test
    void theDefaultValuesRenderTheObjectsKustomizeRenders() {
        var kustomize = Kubectl.kustomize(ManifestTree.ROOT).comparable();
        var chart = HelmChart.render(KUSTOMIZE_KUBE_VERSION, "").comparable();

        assertThat(chart.keySet()).as("objects the chart renders").containsExactlyElementsOf(kustomize.keySet());
        assertThat(chart).as("every object, field by field").isEqualTo(kustomize);
    }

    @Test
    void simulatedProfilesRenderTheObjectsOfTheSimulatedOverlay() {
        var overlay = Kubectl.kustomize(ManifestTree.SIMULATED_OVERLAY);
        var profiles = overlay.all(DaemonSet.class).stream()
                .map(ds -> ds.getMetadata().getLabels().get(ExpectedDeployment.SIMULATED_PROFILE_LABEL)).toList();
        assertThat(profiles).as("the overlay's profiles").hasSizeGreaterThan(3).doesNotContainNull();

        var chart = HelmChart.render(KUSTOMIZE_KUBE_VERSION, "devicePlugin: {simulatedProfiles: [" + String.join(", ", profiles) + "]}");

        assertThat(chart.comparable()).isEqualTo(overlay.comparable());
    }

    @Test
    void monitoringAddsTheObjectsOfTheMonitoringKustomization() {
        var expected = new TreeMap<>(Kubectl.kustomize(ManifestTree.ROOT).comparable());
        expected.putAll(Kubectl.kustomize(MonitoringQueries.MONITORING).comparable());

        var chart = HelmChart.render(KUSTOMIZE_KUBE_VERSION, "monitoring: {enabled: true}").comparable();

        assertThat(chart).isEqualTo(expected);
    }

    /** Each supported release, 1.33 to 1.37, gets its own kube-scheduler. */
    @ParameterizedTest
    @CsvSource({
            "1.33.0, registry.k8s.io/kube-scheduler:v1.33.0",
            "1.34.1, registry.k8s.io/kube-scheduler:v1.34.1",
            "1.35.9, registry.k8s.io/kube-scheduler:v1.35.9",
            "1.36.4, registry.k8s.io/kube-scheduler:v1.36.4",
            "1.37.1, registry.k8s.io/kube-scheduler:v1.37.1",
            // A provider's build of a release: registry.k8s.io has only the plain release's tag.
            "1.36.2-gke.1587003, registry.k8s.io/kube-scheduler:v1.36.2",
            "1.37.1-eks-3f2a1c9, registry.k8s.io/kube-scheduler:v1.37.1"})
    void kubeSchedulersImageIsTheClustersVersion(String kubeVersion, String image) {
        assertThat(kubeSchedulerImage(HelmChart.render(kubeVersion, ""))).isEqualTo(image);
    }

    @Test
    void aSetTagWinsOverTheClustersVersion() {
        assertThat(kubeSchedulerImage(HelmChart.render("1.37.1", "scheduler: {image: {tag: v1.37.0}}")))
                .isEqualTo("registry.k8s.io/kube-scheduler:v1.37.0");
    }

    /** Below the oldest supported release Helm refuses the install, naming the range (a provider's build of 1.33 passes). */
    @ParameterizedTest
    @CsvSource({"1.32.9", "1.29.9"})
    void aClusterOlderThanTheSupportedReleasesIsRefused(String kubeVersion) {
        assertThat(HelmChart.refusal(kubeVersion, "")).contains(">=1.33.0-0").contains("v" + kubeVersion);
        assertThat(kubeSchedulerImage(HelmChart.render("1.33.0-gke.1200", ""))).isEqualTo("registry.k8s.io/kube-scheduler:v1.33.0");
    }

    @ParameterizedTest
    @CsvSource({
            "auto,  1.33.0, true",
            "auto,  1.37.1, true",
            "true,  1.33.0, true",
            "false, 1.37.1, false"})
    void theAdmissionPolicyIsRenderedWhereTheClusterServesIt(String enabled, String kubeVersion, boolean rendered) {
        var kinds = HelmChart.render(kubeVersion, "admissionPolicy: {enabled: " + enabled + "}").objects().stream()
                .map(o -> o.getKind()).toList();
        if (rendered) {
            assertThat(kinds).contains("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding");
        } else {
            assertThat(kinds).doesNotContain("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding").contains("DaemonSet");
        }
    }

    static String kubeSchedulerImage(Rendering rendering) {
        return containerImage(rendering, ExpectedDeployment.KUBE_SCHEDULER_CONTAINER);
    }

    static String containerImage(Rendering rendering, String container) {
        List<String> images = rendering.one(Deployment.class, ExpectedDeployment.SCHEDULER).getSpec().getTemplate().getSpec()
                .getContainers().stream().filter(c -> c.getName().equals(container)).map(c -> c.getImage()).toList();
        assertThat(images).hasSize(1);
        return images.getFirst();
    }
}
