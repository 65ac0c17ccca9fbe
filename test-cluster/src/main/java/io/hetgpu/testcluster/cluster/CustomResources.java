package io.hetgpu.testcluster.cluster;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Locale;

/**
 * CustomResourceDefinitions as an operator's installation puts them in the cluster: the API server then serves the kind
 * in discovery, which is where the extender looks for the kinds it reads job sizes from. The schema keeps every field;
 * the test cluster validates nothing.
 */
public final class CustomResources {

    private CustomResources() {
    }

    /** Defines {@code kind} ({@code plural}) in {@code group}, namespaced, served and stored in {@code version}. */
    public static void define(KubernetesClient client, String group, String version, String kind, String plural) {
        client.apiextensions().v1().customResourceDefinitions().resource(new CustomResourceDefinitionBuilder()
                .withNewMetadata().withName(plural + "." + group).endMetadata()
                .withNewSpec().withGroup(group).withScope("Namespaced")
                .withNewNames().withKind(kind).withPlural(plural).withSingular(kind.toLowerCase(Locale.ROOT))
                .withListKind(kind + "List").endNames()
                .addNewVersion().withName(version).withServed(true).withStorage(true)
                .withNewSchema().withNewOpenAPIV3Schema().withType("object").withXKubernetesPreserveUnknownFields(true)
                .endOpenAPIV3Schema().endSchema().endVersion()
                .endSpec().build()).create();
    }
}
