package io.hetgpu.testcluster.manifests;

import static io.hetgpu.testcluster.manifests.ExpectedDeployment.DEVICE_PLUGIN;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.NAMESPACE;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.hetgpu.gpu.inventory.HetgpuDra;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * hetgpu's DRA driver as shipped: {@code kubectl kustomize manifests/overlays/dra} (the install with the node agent
 * serving kubelet's DRA API, the DeviceClass, the admission policies) and the chart with
 * {@code devicePlugin.kubeletApi: dra} render the same objects; the node agent gets the DRA folders and only them, and
 * RBAC held to the requests a DRA driver makes; the claim templates land in the tenant namespaces the admin names.
 * DraAdmissionTest evaluates the policies.
 */
class DraInstallTest {

    /** The kube-scheduler pin of the images component: a release that serves MutatingAdmissionPolicy v1. */
    private static final String KUBE = "1.37.1";
    private static final String DRA_VALUES = "devicePlugin: {kubeletApi: dra}";
    private static final String DRA_AGENT_ROLE = "hetgpu-device-plugin-dra";

    static Rendering overlay() {
        return Kubectl.kustomize(ManifestTree.DRA_OVERLAY);
    }

    @Test
    void theOverlayIsTheInstallWithTheNodeAgentAsADraDriverAndItsObjectsAdded() {
        var install = Kubectl.kustomize(ManifestTree.ROOT).comparable();
        var dra = overlay().comparable();
        var daemonSet = "DaemonSet " + NAMESPACE + "/" + DEVICE_PLUGIN;
        var added = new TreeMap<>(dra);
        added.keySet().removeAll(install.keySet());
        assertThat(added.keySet()).containsExactlyInAnyOrder("DeviceClass gpu.hetgpu.io", "ClusterRole " + DRA_AGENT_ROLE,
                "ClusterRoleBinding " + DRA_AGENT_ROLE, "ValidatingAdmissionPolicy hetgpu-dra-claim-level",
                "ValidatingAdmissionPolicyBinding hetgpu-dra-claim-level", "ValidatingAdmissionPolicy hetgpu-dra-preferences",
                "ValidatingAdmissionPolicyBinding hetgpu-dra-preferences", "ValidatingAdmissionPolicy hetgpu-node-agent-own-slices",
                "ValidatingAdmissionPolicyBinding hetgpu-node-agent-own-slices", "MutatingAdmissionPolicy hetgpu-dra-claim-level",
                "MutatingAdmissionPolicyBinding hetgpu-dra-claim-level");
        var removed = new TreeMap<>(install);
        removed.keySet().removeAll(dra.keySet());
        assertThat(removed.keySet()).as("a DRA driver patches no Node, watches no pods, posts no Events")
                .containsExactlyInAnyOrder("ClusterRole " + DEVICE_PLUGIN, "ClusterRoleBinding " + DEVICE_PLUGIN);
        install.forEach((id, object) -> {
            if (!id.equals(daemonSet) && !removed.containsKey(id)) {
                assertThat(dra.get(id)).as(id).isEqualTo(object);
            }
        });
        var deviceClass = overlay().one(DeviceClass.class, HetgpuDra.DRIVER);
        assertThat(deviceClass.getSpec().getSelectors()).singleElement()
                .satisfies(s -> assertThat(s.getCel().getExpression()).isEqualTo("device.driver == \"" + HetgpuDra.DRIVER + "\""));
    }

    @Test
    void theNodeAgentServesKubeletsDraApiFromKubeletsDraFoldersOnly() {
        var agent = overlay().one(DaemonSet.class, DEVICE_PLUGIN).getSpec().getTemplate().getSpec();
        var container = agent.getContainers().getFirst();
        assertThat(container.getArgs()).contains("--kubelet-api=dra", "--driver-name=" + HetgpuDra.DRIVER,
                "--plugin-registry-dir=/var/lib/kubelet/plugins_registry", "--dra-plugin-dir=/var/lib/kubelet/plugins",
                "--cdi-dir=/var/run/cdi", "--gpu-source=nvml", "--node-name=$(NODE_NAME)");
        assertThat(container.getArgs()).as("no device plugin API: no resource registered, none of its folders")
                .noneMatch(a -> a.startsWith("--resource-name") || a.startsWith("--device-plugin-dir") || a.startsWith("--pod-resources-socket"));
        Map<String, String> mounts = container.getVolumeMounts().stream().collect(Collectors.toMap(VolumeMount::getName, VolumeMount::getMountPath));
        Map<String, String> hostPaths = agent.getVolumes().stream().filter(v -> v.getHostPath() != null)
                .collect(Collectors.toMap(Volume::getName, v -> v.getHostPath().getPath()));
        assertThat(hostPaths).isEqualTo(Map.of("plugins-registry", "/var/lib/kubelet/plugins_registry", "plugins", "/var/lib/kubelet/plugins",
                "cdi", "/var/run/cdi"));
        hostPaths.forEach((name, path) -> assertThat(mounts.get(name)).as(name + " is mounted where it is on the host").isEqualTo(path));
        // Every folder an argument names is mounted.
        for (var arg : container.getArgs()) {
            if (arg.matches("--(plugin-registry|dra-plugin|cdi)-dir=.*")) {
                var folder = arg.substring(arg.indexOf('=') + 1);
                assertThat(mounts.values()).as(arg).anyMatch(folder::startsWith);
            }
        }
        assertThat(container.getSecurityContext().getPrivileged()).isFalse();
        assertThat(container.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
    }

    /**
     * The DRA driver's rules are all the node agent holds, and exactly what it asks: its node's slices (listed, written,
     * read back; never watched), a claim it prepares, its Node (the slices' owner). ManifestRbacTest holds them to a run.
     */
    @Test
    void theNodeAgentsDraRulesAreHeldToTheRequestsItMakes() {
        var grants = overlay().grantsOf(NAMESPACE, DEVICE_PLUGIN).stream()
                .map(g -> g.source().substring(g.source().lastIndexOf('/') + 1) + ": " + String.join(",", g.rule().getApiGroups()) + " "
                        + String.join(",", g.rule().getResources()) + " " + String.join(",", g.rule().getVerbs()))
                .toList();
        assertThat(grants).containsExactlyInAnyOrder(DRA_AGENT_ROLE + ": resource.k8s.io resourceslices get,list,create,update,delete",
                DRA_AGENT_ROLE + ": resource.k8s.io resourceclaims get", DRA_AGENT_ROLE + ":  nodes get");
        assertThat(Kubectl.kustomize(ManifestTree.ROOT).grantsOf(NAMESPACE, DEVICE_PLUGIN))
                .as("the device plugin install grants no DRA rule").noneMatch(g -> g.rule().getApiGroups().contains("resource.k8s.io"));
    }

    /** The node agent's own parser accepts the DRA arguments, and takes them as DRA mode's (ContainerFlagsTest parses every install's). */
    @Test
    void theNodeAgentsParserAcceptsTheDraArguments() {
        var container = overlay().one(DaemonSet.class, DEVICE_PLUGIN).getSpec().getTemplate().getSpec().getContainers().getFirst();
        var parsed = Program.DEVICE_PLUGIN.parse(Program.expandedArgs(container, Map.of("spec.nodeName", "gpu-node-7")));
        assertThat(Program.value(parsed, "--kubelet-api")).isEqualToIgnoringCase("dra");
        assertThat(Program.value(parsed, "--dra-plugin-dir")).as("kubelet's plugins folder: the socket goes to <DIR>/<driver>/dra.sock")
                .isEqualTo("/var/lib/kubelet/plugins");
    }

    @Test
    void theChartWithTheDraApiRendersTheObjectsOfTheOverlay() {
        var kustomize = overlay().comparable();
        var chart = HelmChart.render(KUBE, DRA_VALUES).comparable();
        assertThat(chart.keySet()).containsExactlyElementsOf(kustomize.keySet());
        assertThat(chart).isEqualTo(kustomize);
    }

    /** MutatingAdmissionPolicy v1 is served from 1.36 (GA, on by default); before, a pod names its level and the VAP checks it. */
    @ParameterizedTest
    @CsvSource({"auto, 1.34.0, false", "auto, 1.35.3, false", "auto, 1.36.0, true", "auto, 1.37.1, true", "false, 1.37.1, false",
            "true, 1.35.3, true"})
    void theMutationIsRenderedWhereTheClusterServesIt(String mode, String kubeVersion, boolean rendered) {
        var rendering = HelmChart.render(kubeVersion, DRA_VALUES + "\ndra: {priorityMutation: " + mode + "}");
        assertThat(rendering.all(MutatingAdmissionPolicy.class)).as(mode + " on " + kubeVersion).hasSize(rendered ? 1 : 0);
        assertThat(rendering.objects()).extracting(HasMetadata::getKind).contains("ValidatingAdmissionPolicy", "DeviceClass");
    }

    /** In another namespace the chart's DRA objects name the node agent's service account there. */
    @Test
    void theChartNamesTheNodeAgentOfItsNamespace() {
        var rendering = HelmChart.render(KUBE, DRA_VALUES + "\nnamespace: {name: gpu-scheduling}");
        assertThat(rendering.grantsOf("gpu-scheduling", DEVICE_PLUGIN)).anyMatch(g -> g.source().endsWith("/" + DRA_AGENT_ROLE));
        assertThat(rendering.one(io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy.class,
                "hetgpu-node-agent-own-slices").getSpec().getMatchConditions().getFirst().getExpression())
                .contains("system:serviceaccount:gpu-scheduling:" + DEVICE_PLUGIN).doesNotContain("hetgpu-system");
    }

    @Test
    void theDefaultChartRendersNothingOfDra() {
        assertThat(HelmChart.render(KUBE, "").objects()).extracting(HasMetadata::getKind)
                .doesNotContain("DeviceClass", "ResourceClaimTemplate", "MutatingAdmissionPolicy");
    }

    /** The templates a tenant namespace's kustomization includes, and the chart's for each namespace listed, are the same. */
    @Test
    void theClaimTemplatesGoToEachTenantNamespace(@TempDir Path tenant) {
        var component = ManifestTree.DRA_CLAIM_TEMPLATES.toAbsolutePath().normalize();
        write(tenant.resolve(ManifestTree.KUSTOMIZATION), """
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                namespace: ml
                components:
                  - %s
                """.formatted(tenant.relativize(component)));
        var kustomized = Kubectl.kustomize(tenant);
        var names = kustomized.all(ResourceClaimTemplate.class).stream()
                .map(t -> t.getMetadata().getNamespace() + "/" + t.getMetadata().getName()).toList();
        assertThat(names).hasSize(12).allMatch(n -> n.matches("ml/hetgpu-gpus-[1248]-(high|normal|low)"));

        var chart = HelmChart.render(KUBE, DRA_VALUES + "\ndra: {claimTemplateNamespaces: [ml, vision]}");
        var byNamespace = chart.all(ResourceClaimTemplate.class).stream()
                .collect(Collectors.groupingBy(t -> t.getMetadata().getNamespace(), Collectors.counting()));
        assertThat(byNamespace).isEqualTo(Map.of("ml", 12L, "vision", 12L));
        var ml = chart.comparable().entrySet().stream().filter(e -> e.getKey().startsWith("ResourceClaimTemplate ml/"))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
        assertThat(ml).isEqualTo(kustomized.comparable());
    }

    private static void write(Path file, String text) {
        try {
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<ResourceClaimTemplate> shippedTemplates() {
        return Rendering.parse(ManifestTree.DRA_CLAIM_TEMPLATES, read(ManifestTree.DRA_CLAIM_TEMPLATES.resolve("claim-templates.yaml")))
                .all(ResourceClaimTemplate.class);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
