package io.hetgpu.testcluster.manifests;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.hetgpu.testcluster.manifests.ExpectedDeployment.NAMESPACE;
import static io.hetgpu.testcluster.manifests.ManifestTree.IMAGES_COMPONENT;
import static io.hetgpu.testcluster.manifests.ManifestTree.ROOT;
import static io.hetgpu.testcluster.manifests.ManifestTree.SAMPLES;
import static io.hetgpu.testcluster.manifests.ManifestTree.SIMULATED_OVERLAY;
import static org.assertj.core.api.Assertions.assertThat;

/** Every manifest parses into typed objects with known fields only, and the kustomizations hold together. */
class ManifestFilesTest {

    /** The only object outside hetgpu-system: it must sit beside the Role it binds. */
    private static final String KUBE_SYSTEM_ROLE_BINDING = "hetgpu-scheduler-authentication-reader";

    private final ManifestTree manifests = ManifestTree.load();

    @Test
    void everyDocumentIsATypedKubernetesObject() {
        assertThat(manifests.documents()).hasSizeGreaterThan(20);
        for (ManifestDocument document : manifests.documents()) {
            assertThat(document.object())
                    .as(document.describe())
                    .isNotInstanceOf(GenericKubernetesResource.class);
            assertThat(document.object().getMetadata().getName()).as(document.describe()).isNotBlank();
        }
    }

    @Test
    void everyFieldIsKnownToTheKubernetesApi() {
        var unknown = new ArrayList<String>();
        for (ManifestDocument document : manifests.documents()) {
            ManifestTree.unknownFields(document).forEach(path -> unknown.add(document.describe() + " " + path));
        }
        assertThat(unknown).isEmpty();
    }

    @Test
    void theBaseListsEveryFileBesideItAndNoSample() {
        JsonNode kustomization = ManifestTree.kustomization(ROOT);
        var listed = new HashSet<Path>();
        kustomization.path("resources").forEach(r -> listed.add(ROOT.resolve(r.asText()).normalize()));

        var beside = ManifestTree.yamlFiles().stream()
                .filter(f -> f.getParent().equals(ROOT))
                .map(Path::normalize)
                .toList();
        assertThat(listed).containsExactlyInAnyOrderElementsOf(beside);
        assertThat(listed).noneMatch(p -> p.startsWith(SAMPLES.normalize()));
        assertThat(kustomization.path("components")).extracting(JsonNode::asText).containsExactly("images");
    }

    @Test
    void theOverlayBuildsOnTheBaseAndItsResourcesExist() {
        JsonNode kustomization = ManifestTree.kustomization(SIMULATED_OVERLAY);
        kustomization.path("resources").forEach(r -> {
            Path resource = SIMULATED_OVERLAY.resolve(r.asText()).normalize();
            assertThat(Files.exists(resource)).as(resource.toString()).isTrue();
        });
        assertThat(kustomization.path("resources")).extracting(JsonNode::asText).contains("../..");
        assertThat(SIMULATED_OVERLAY.resolve(kustomization.path("components").get(0).asText()).normalize())
                .isEqualTo(IMAGES_COMPONENT.normalize());
    }

    @Test
    void theOverlayDeletesAnObjectThatTheBaseHas() {
        for (JsonNode patch : ManifestTree.kustomization(SIMULATED_OVERLAY).path("patches")) {
            JsonNode target = ManifestTree.yaml(patch.path("patch").asText());
            String kind = target.path("kind").asText();
            String name = target.path("metadata").path("name").asText();
            assertThat(manifests.base())
                    .as("patch target %s/%s", kind, name)
                    .anyMatch(d -> d.object().getKind().equals(kind) && d.object().getMetadata().getName().equals(name));
        }
    }

    /** kubectl apply -k pulls every image through the images component; none may slip past it. */
    @Test
    void everyContainerImageIsNamedInTheImagesComponent() {
        Set<String> named = new HashSet<>();
        ManifestTree.kustomization(IMAGES_COMPONENT).path("images").forEach(i -> named.add(i.path("name").asText()));

        var deployed = new ArrayList<ManifestDocument>(manifests.base());
        deployed.addAll(manifests.in(SIMULATED_OVERLAY));
        var images = deployed.stream()
                .flatMap(d -> PodTemplates.of(d.object()).stream())
                .flatMap(t -> t.getSpec().getContainers().stream())
                .map(c -> c.getImage())
                .toList();
        assertThat(images).isNotEmpty().allSatisfy(image -> assertThat(named).contains(image));
        assertThat(named).containsExactlyInAnyOrderElementsOf(Set.copyOf(images));
    }

    @Test
    void namespacedObjectsLiveInHetgpuSystemAndClusterObjectsHaveNoNamespace() {
        var deployed = new ArrayList<ManifestDocument>(manifests.base());
        deployed.addAll(manifests.in(SIMULATED_OVERLAY));
        for (ManifestDocument document : deployed) {
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
        assertThat(ManifestTree.kustomization(ROOT).has("namespace")).isFalse();
        assertThat(ManifestTree.kustomization(SIMULATED_OVERLAY).has("namespace")).isFalse();
    }

    @Test
    void noTwoObjectsShareKindNamespaceAndName() {
        var deployed = new ArrayList<ManifestDocument>(manifests.base());
        deployed.addAll(manifests.in(SIMULATED_OVERLAY));
        deployed.addAll(manifests.in(SAMPLES));
        List<String> ids = deployed.stream()
                .map(d -> d.object().getKind() + "/" + d.object().getMetadata().getNamespace() + "/" + d.object().getMetadata().getName())
                .toList();
        assertThat(ids).doesNotHaveDuplicates();
    }
}
