package io.hetgpu.testcluster.manifests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;

import static io.hetgpu.testcluster.manifests.ExpectedDeployment.DEVICE_PLUGIN;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.NAMESPACE;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.SHIPPED_PROFILES;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.SIMULATED_PROFILE_LABEL;
import static io.hetgpu.testcluster.manifests.ManifestTree.BASE;
import static io.hetgpu.testcluster.manifests.ManifestTree.DRA_CLAIM_TEMPLATES;
import static io.hetgpu.testcluster.manifests.ManifestTree.DRA_COMPONENT;
import static io.hetgpu.testcluster.manifests.ManifestTree.DRA_MUTATION_COMPONENT;
import static io.hetgpu.testcluster.manifests.ManifestTree.DRA_OVERLAY;
import static io.hetgpu.testcluster.manifests.ManifestTree.IMAGES_COMPONENT;
import static io.hetgpu.testcluster.manifests.ManifestTree.ROOT;
import static io.hetgpu.testcluster.manifests.ManifestTree.SIMULATED_OVERLAY;
import static org.assertj.core.api.Assertions.assertThat;

/** Every kustomization in manifests/ rendered by the real kubectl, and what the renderings a user applies hold. */
class KustomizationsTest {

    /** The only object outside hetgpu-system: it must sit beside the Role it binds. */
    private static final String KUBE_SYSTEM_ROLE_BINDING = "hetgpu-scheduler-authentication-reader";
    private static final Map.Entry<String, String> PART_OF = Map.entry("app.kubernetes.io/part-of", "hetgpu");

    /** What a user applies with `kubectl apply -k`: every image named, every object deployable. */
    static List<Path> installs() {
        return List.of(ROOT, SIMULATED_OVERLAY);
    }

    static List<Path> kustomizations() {
        return ManifestTree.kustomizations();
    }

    /**
     * Kustomizations applied beside an install, not instead of one: manifests/monitoring/ (the Prometheus Operator's
     * objects; MonitoringRulesTest and ChartRenderTest check what it renders).
     */
    private static final List<Path> ADD_ONS = List.of(MonitoringQueries.MONITORING);

    /** The components of hetgpu's DRA driver: the DRA overlay's two, and the claim templates applied per tenant namespace. */
    private static final Set<Path> DRA_COMPONENTS = Set.of(DRA_COMPONENT.normalize(), DRA_MUTATION_COMPONENT.normalize(),
            DRA_CLAIM_TEMPLATES.normalize());

    @ParameterizedTest
    @MethodSource("kustomizations")
    void rendersWithRealKubectl(Path folder) {
        if (isComponent(folder) && ManifestTree.kustomization(folder).has("patches")) {
            // A component that patches the install's objects renders only inside one: DraInstallTest renders the DRA overlay.
            assertThat(DRA_COMPONENTS).as(folder.toString()).contains(folder.normalize());
            return;
        }
        Rendering rendering = Kubectl.kustomize(folder);
        if (isComponent(folder) && !ManifestTree.kustomization(folder).has("resources")) {
            // A component of settings adds nothing by itself; what it does shows in the renderings that include it.
            assertThat(rendering.documents()).as(folder.toString()).isEmpty();
        } else if (isComponent(folder)) {
            assertThat(rendering.documents()).as(folder.toString()).isNotEmpty();
        } else if (ADD_ONS.contains(folder)) {
            assertThat(rendering.documents()).as(folder.toString()).hasSizeGreaterThanOrEqualTo(4);
        } else {
            assertThat(rendering.documents()).as(folder.toString()).hasSizeGreaterThan(10);
        }
    }

    /** A new overlay must join installs() (and with it every check of the installs) or be a component they use. */
    @Test
    void everyKustomizationIsTheBaseAnInstallOrAComponentEveryInstallUses() {
        Set<Path> known = new HashSet<>();
        known.add(BASE.normalize());
        // The samples render together too (their tests read that rendering); they are not an install.
        known.add(ManifestTree.SAMPLES.normalize());
        ADD_ONS.forEach(p -> known.add(p.normalize()));
        installs().forEach(p -> known.add(p.normalize()));
        known.add(DRA_OVERLAY.normalize());
        for (Path folder : kustomizations()) {
            if (DRA_COMPONENTS.contains(folder.normalize())) {
                // The DRA overlay's, and the claim templates a tenant namespace's kustomization includes (DraInstallTest).
                continue;
            }
            if (isComponent(folder)) {
                for (Path install : installs()) {
                    var components = new ArrayList<Path>();
                    ManifestTree.kustomization(install).path("components")
                            .forEach(c -> components.add(install.resolve(c.asText()).normalize()));
                    assertThat(components).as(install + " includes " + folder).contains(folder.normalize());
                }
            } else {
                assertThat(known).as("kustomizations checked as installs or base").contains(folder.normalize());
            }
        }
        // The base is a folder of its own so that overlays can build on it: kustomize refuses an overlay inside its base.
        assertThat(ManifestTree.kustomization(BASE).path("components")).as("the base sets no images").isEmpty();
    }

    @Test
    void theBaseListsEveryFileBesideItAndNoSample() {
        JsonNode kustomization = ManifestTree.kustomization(BASE);
        var listed = new HashSet<Path>();
        kustomization.path("resources").forEach(r -> listed.add(BASE.resolve(r.asText()).normalize()));
        var beside = ManifestTree.yamlFiles().stream()
                .filter(f -> f.getParent().equals(BASE))
                .map(Path::normalize)
                .toList();
        assertThat(listed).containsExactlyInAnyOrderElementsOf(beside);
    }

    /** The images component changes image names and nothing else. */
    @Test
    void theInstallIsTheBaseWithTheComponentsImages() {
        Map<String, String> renamed = ImageSetting.fromComponent().stream()
                .collect(Collectors.toMap(ImageSetting::name, ImageSetting::rendered));
        Map<String, JsonNode> base = byId(Kubectl.kustomize(BASE));
        Map<String, JsonNode> install = byId(Kubectl.kustomize(ROOT));
        assertThat(install.keySet()).isEqualTo(base.keySet());
        base.forEach((id, source) -> assertThat(install.get(id)).as(id).isEqualTo(withImages(source, renamed)));
    }

    /** The simulated overlay swaps the NVML DaemonSet for one DaemonSet per shipped profile and leaves every other object alone. */
    @Test
    void theSimulatedOverlayIsTheInstallWithSimulatedDaemonSetsInsteadOfTheNvmlOne() {
        Map<String, JsonNode> install = byId(Kubectl.kustomize(ROOT));
        Rendering simulatedRendering = Kubectl.kustomize(SIMULATED_OVERLAY);
        Map<String, JsonNode> simulated = byId(simulatedRendering);

        String nvml = "DaemonSet/" + NAMESPACE + "/" + DEVICE_PLUGIN;
        assertThat(install).containsKey(nvml);
        assertThat(simulated).doesNotContainKey(nvml);
        var added = new TreeMap<>(simulated);
        added.keySet().removeAll(install.keySet());
        assertThat(simulatedRendering.all(DaemonSet.class).stream().map(d -> d.getMetadata().getLabels().get(SIMULATED_PROFILE_LABEL)))
                .containsExactlyInAnyOrderElementsOf(SHIPPED_PROFILES);
        assertThat(added.keySet()).hasSize(SHIPPED_PROFILES.size()).allMatch(id -> id.startsWith("DaemonSet/" + NAMESPACE + "/"));

        install.forEach((id, source) -> {
            if (!id.equals(nvml)) {
                assertThat(simulated.get(id)).as(id).isEqualTo(source);
            }
        });
    }

    /** Every image comes through the images component, once: no name is left as the base wrote it, and no image has two tags. */
    @ParameterizedTest
    @MethodSource("installs")
    void everyContainerImageIsSetOnceByTheImagesComponent(Path folder) {
        var settings = ImageSetting.fromComponent();
        Set<String> rendered = settings.stream().map(ImageSetting::rendered).collect(Collectors.toSet());
        List<String> images = images(Kubectl.kustomize(folder));
        assertThat(images).isNotEmpty().allSatisfy(image -> assertThat(rendered).as(folder.toString()).contains(image));
        assertThat(settings).extracting(ImageSetting::repository).doesNotHaveDuplicates();
    }

    /** And the component names exactly the images the base uses: none slips past it, none is stale. */
    @Test
    void theImagesComponentNamesEveryImageOfTheBase() {
        var names = ImageSetting.fromComponent().stream().map(ImageSetting::name).collect(Collectors.toSet());
        assertThat(Set.copyOf(images(Kubectl.kustomize(BASE)))).isEqualTo(names);
        assertThat(ManifestTree.kustomization(IMAGES_COMPONENT).path("kind").asText()).isEqualTo("Component");
    }

    @ParameterizedTest
    @MethodSource("installs")
    void namespacedObjectsLiveInHetgpuSystemAndClusterObjectsHaveNoNamespace(Path folder) {
        Rendering rendering = Kubectl.kustomize(folder);
        assertThat(rendering.all(Namespace.class)).extracting(n -> n.getMetadata().getName()).containsExactly(NAMESPACE);
        for (ManifestDocument document : rendering.documents()) {
            HasMetadata object = document.object();
            String namespace = object.getMetadata().getNamespace();
            if (!(object instanceof Namespaced)) {
                assertThat(namespace).as(document.describe()).isNull();
            } else if (object instanceof RoleBinding && object.getMetadata().getName().equals(KUBE_SYSTEM_ROLE_BINDING)) {
                assertThat(namespace).as(document.describe()).isEqualTo("kube-system");
            } else {
                assertThat(namespace).as(document.describe()).isEqualTo(NAMESPACE);
            }
        }
        // A kustomize namespace: field would move the kube-system RoleBinding into hetgpu-system.
        for (Path kustomization : kustomizations()) {
            assertThat(ManifestTree.kustomization(kustomization).has("namespace")).as(kustomization.toString()).isFalse();
        }
        // Each workload's service account exists where the workload runs.
        Set<String> accounts = rendering.all(ServiceAccount.class).stream()
                .map(a -> a.getMetadata().getNamespace() + "/" + a.getMetadata().getName()).collect(Collectors.toSet());
        for (var workload : rendering.workloads()) {
            assertThat(accounts).as(workload.describe())
                    .contains(workload.object().getMetadata().getNamespace() + "/" + workload.template().getSpec().getServiceAccountName());
        }
    }

    @ParameterizedTest
    @MethodSource("installs")
    void everyObjectSaysItIsPartOfHetgpu(Path folder) {
        for (ManifestDocument document : Kubectl.kustomize(folder).documents()) {
            assertThat(document.object().getMetadata().getLabels()).as(document.describe()).contains(PART_OF);
        }
    }

    private static boolean isComponent(Path folder) {
        return "Component".equals(ManifestTree.kustomization(folder).path("kind").asText());
    }

    private static List<String> images(Rendering rendering) {
        return rendering.workloads().stream()
                .flatMap(w -> {
                    var containers = new ArrayList<>(w.template().getSpec().getContainers());
                    if (w.template().getSpec().getInitContainers() != null) {
                        containers.addAll(w.template().getSpec().getInitContainers());
                    }
                    return containers.stream();
                })
                .map(c -> c.getImage())
                .toList();
    }

    private static Map<String, JsonNode> byId(Rendering rendering) {
        Map<String, JsonNode> byId = new HashMap<>();
        for (ManifestDocument document : rendering.documents()) {
            var metadata = document.object().getMetadata();
            String id = document.object().getKind() + "/" + (metadata.getNamespace() == null ? "" : metadata.getNamespace())
                    + "/" + metadata.getName();
            assertThat(byId.put(id, document.source())).as("two objects " + id).isNull();
        }
        return byId;
    }

    /** {@code source} with every {@code image:} value renamed as the component renames it. */
    private static JsonNode withImages(JsonNode source, Map<String, String> renamed) {
        return rewrite(source.deepCopy(), image -> renamed.getOrDefault(image, image));
    }

    private static JsonNode rewrite(JsonNode node, Function<String, String> image) {
        if (node instanceof ObjectNode object) {
            object.properties().forEach(field -> {
                if (field.getKey().equals("image") && field.getValue().isTextual()) {
                    field.setValue(TextNode.valueOf(image.apply(field.getValue().asText())));
                } else {
                    rewrite(field.getValue(), image);
                }
            });
        } else if (node.isArray()) {
            node.forEach(element -> rewrite(element, image));
        }
        return node;
    }
}
