package io.hetgpu.testcluster.api;

import io.fabric8.kubernetes.api.model.APIGroupBuilder;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceBuilder;
import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.api.model.GroupVersionForDiscoveryBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.MockResponse;
import java.util.List;
import java.util.Optional;

/**
 * Discovery for {@code resource.k8s.io/v1}, which every API server serves since Kubernetes 1.34 (DRA's structured
 * parameters GA): fabric8's mock answers an empty resource list for any group, so that a component asking whether the
 * cluster serves ResourceSlices would be told it does not. Answered here as the API server answers it: the group, and
 * its four kinds with the verbs an informer needs.
 */
final class ResourceApiDiscovery {

    static final String GROUP = "resource.k8s.io";
    static final String VERSION = "v1";
    private static final List<String> VERBS = List.of("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch");

    private ResourceApiDiscovery() {
    }

    /** The discovery answer for a GET of {@code path}, when it asks about this group. */
    static Optional<MockResponse> answer(String path) {
        var bare = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
        if (bare.equals("/apis/" + GROUP)) {
            var version = new GroupVersionForDiscoveryBuilder().withGroupVersion(GROUP + "/" + VERSION).withVersion(VERSION).build();
            return Optional.of(json(new APIGroupBuilder().withName(GROUP).withVersions(version).withPreferredVersion(version).build()));
        }
        if (bare.equals("/apis/" + GROUP + "/" + VERSION)) {
            return Optional.of(json(new APIResourceListBuilder().withGroupVersion(GROUP + "/" + VERSION).withResources(
                    resource("deviceclasses", "DeviceClass", false),
                    resource("resourceclaims", "ResourceClaim", true),
                    resource("resourceclaims/status", "ResourceClaim", true),
                    resource("resourceclaimtemplates", "ResourceClaimTemplate", true),
                    resource("resourceslices", "ResourceSlice", false)).build()));
        }
        return Optional.empty();
    }

    private static APIResource resource(String name, String kind, boolean namespaced) {
        var status = name.endsWith("/status");
        return new APIResourceBuilder().withName(name).withKind(kind).withNamespaced(namespaced)
                .withSingularName(status ? "" : kind.toLowerCase(java.util.Locale.ROOT))
                .withVerbs(status ? List.of("get", "patch", "update") : VERBS).build();
    }

    private static MockResponse json(Object body) {
        return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json").setBody(Serialization.asJson(body));
    }
}
