package io.hetgpu.testcluster.manifests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleRef;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** What one kustomization renders to: the objects {@code kubectl apply -k folder} would create. */
record Rendering(Path folder, List<ManifestDocument> documents) {

    Rendering {
        documents = List.copyOf(documents);
    }

    /** A multi-document YAML stream (what kubectl kustomize or helm template print), each document a typed object. */
    static Rendering parse(Path source, String yaml) {
        var serialization = new KubernetesSerialization();
        var documents = new ArrayList<ManifestDocument>();
        int position = 0;
        for (var document : ManifestTree.readDocuments(yaml)) {
            KubernetesResource parsed = serialization.unmarshal(document.toString());
            if (!(parsed instanceof HasMetadata object)) {
                throw new AssertionError(source + "#" + position + " renders something that is not a Kubernetes object: " + document);
            }
            documents.add(new ManifestDocument(source, position++, document, object));
        }
        return new Rendering(source, documents);
    }

    /**
     * Each object as a tree by "Kind namespace/name", a ConfigMap's YAML files (extender.yaml, config.yaml) parsed:
     * two renderings that agree here create the same objects and hand the programs the same configuration, whatever
     * their comments, key order or quoting.
     */
    Map<String, JsonNode> comparable() {
        var byName = new TreeMap<String, JsonNode>();
        for (var document : documents) {
            var tree = document.source().deepCopy();
            if (tree instanceof ObjectNode object && object.path("data").isObject() && "ConfigMap".equals(object.path("kind").asText())) {
                var data = (ObjectNode) object.get("data");
                data.properties().forEach(entry -> {
                    if (entry.getKey().endsWith(".yaml")) {
                        entry.setValue(ManifestTree.yaml(entry.getValue().asText()));
                    }
                });
            }
            var metadata = document.object().getMetadata();
            String key = document.object().getKind() + " " + (metadata.getNamespace() == null ? "" : metadata.getNamespace() + "/")
                    + metadata.getName();
            if (byName.put(key, tree) != null) {
                throw new AssertionError(folder + " renders " + key + " twice");
            }
        }
        return byName;
    }

    List<HasMetadata> objects() {
        return documents.stream().map(ManifestDocument::object).toList();
    }

    <T extends HasMetadata> List<T> all(Class<T> type) {
        return objects().stream().filter(type::isInstance).map(type::cast).toList();
    }

    <T extends HasMetadata> T one(Class<T> type, String name) {
        var named = all(type).stream().filter(o -> o.getMetadata().getName().equals(name)).toList();
        if (named.size() != 1) {
            throw new AssertionError(folder + " renders " + named.size() + " " + type.getSimpleName() + " named " + name);
        }
        return named.getFirst();
    }

    /** The ports of every Service whose selector picks the template's pods: what reaches them from outside. */
    List<String> servicePortsReaching(PodTemplateSpec template) {
        return all(io.fabric8.kubernetes.api.model.Service.class).stream()
                .filter(service -> template.getMetadata().getLabels().entrySet().containsAll(service.getSpec().getSelector().entrySet()))
                .flatMap(service -> service.getSpec().getPorts().stream()
                        .map(port -> service.getMetadata().getName() + ":" + port.getTargetPort().getStrVal()))
                .toList();
    }

    /** A workload's pod template with where it came from, for messages. */
    record Workload(HasMetadata object, PodTemplateSpec template) {
        String describe() {
            return object.getKind() + "/" + object.getMetadata().getName();
        }
    }

    List<Workload> workloads() {
        var workloads = new ArrayList<Workload>();
        for (var object : objects()) {
            PodTemplates.of(object).ifPresent(template -> workloads.add(new Workload(object, template)));
        }
        return workloads;
    }

    /** Every container that runs {@code image} (a repository name, tag and digest ignored), with its workload. */
    List<Running> running(String image) {
        var found = new ArrayList<Running>();
        for (var workload : workloads()) {
            for (var container : workload.template().getSpec().getContainers()) {
                if (repository(container.getImage()).equals(image)) {
                    found.add(new Running(workload, container));
                }
            }
        }
        return found;
    }

    record Running(Workload workload, Container container) {
        String describe() {
            return workload.describe() + " container " + container.getName();
        }
    }

    /** The image name without its tag or digest: {@code registry:5000/a/b:1.0} is {@code registry:5000/a/b}. */
    static String repository(String image) {
        String name = image.contains("@") ? image.substring(0, image.indexOf('@')) : image;
        int slash = name.lastIndexOf('/');
        int colon = name.lastIndexOf(':');
        return colon > slash ? name.substring(0, colon) : name;
    }

    /** A rule and where it holds: every namespace (ClusterRoleBinding) or one namespace (RoleBinding). */
    record Grant(Optional<String> namespace, PolicyRule rule, String source) {
    }

    /** What the service account may do, from every binding that names it. */
    List<Grant> grantsOf(String namespace, String serviceAccount) {
        var grants = new ArrayList<Grant>();
        for (var binding : all(ClusterRoleBinding.class)) {
            if (names(binding.getSubjects(), namespace, serviceAccount)) {
                for (var rule : rulesOf(binding.getRoleRef(), null)) {
                    grants.add(new Grant(Optional.empty(), rule, "ClusterRoleBinding/" + binding.getMetadata().getName()));
                }
            }
        }
        for (var binding : all(RoleBinding.class)) {
            if (names(binding.getSubjects(), namespace, serviceAccount)) {
                String scope = binding.getMetadata().getNamespace();
                for (var rule : rulesOf(binding.getRoleRef(), scope)) {
                    grants.add(new Grant(Optional.of(scope), rule, "RoleBinding/" + scope + "/" + binding.getMetadata().getName()));
                }
            }
        }
        return grants;
    }

    private static boolean names(List<Subject> subjects, String namespace, String serviceAccount) {
        return subjects != null && subjects.stream().anyMatch(s -> "ServiceAccount".equals(s.getKind())
                && serviceAccount.equals(s.getName()) && namespace.equals(s.getNamespace()));
    }

    /** The rules of a rendered role; a role the cluster ships (system:...) is not rendered and yields none here. */
    private List<PolicyRule> rulesOf(RoleRef ref, String namespace) {
        if ("ClusterRole".equals(ref.getKind())) {
            return all(ClusterRole.class).stream().filter(r -> r.getMetadata().getName().equals(ref.getName()))
                    .flatMap(r -> r.getRules().stream()).toList();
        }
        return all(Role.class).stream()
                .filter(r -> r.getMetadata().getName().equals(ref.getName()) && r.getMetadata().getNamespace().equals(namespace))
                .flatMap(r -> r.getRules().stream()).toList();
    }
}
