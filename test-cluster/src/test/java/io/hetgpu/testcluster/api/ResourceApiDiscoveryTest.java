package io.hetgpu.testcluster.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import org.junit.jupiter.api.Test;

class ResourceApiDiscoveryTest {

    @Test
    void theResourceGroupIsServedAsByAKubernetesOfToday() {
        try (var api = ApiServer.start(); var client = api.newClient()) {
            assertThat(client.getApiResources("resource.k8s.io/v1").getResources()).extracting(APIResource::getName)
                    .contains("resourceslices", "resourceclaims", "resourceclaims/status", "resourceclaimtemplates", "deviceclasses");
            assertThat(client.getApiGroup("resource.k8s.io").getPreferredVersion().getGroupVersion()).isEqualTo("resource.k8s.io/v1");
            assertThat(client.supports(ResourceSlice.class)).isTrue();
            // Groups it does not serve stay as fabric8's mock answers them.
            assertThat(client.getApiResources("resource.k8s.io/v1beta1").getResources()).isEmpty();
        }
    }
}
