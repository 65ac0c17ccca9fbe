package io.hetgpu.testcluster.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.BindingBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The test cluster's API server binds pods as the real one does. */
class PodBindingTest {

    private final ApiServer api = ApiServer.start();
    private final io.fabric8.kubernetes.client.KubernetesClient client = api.newClient();

    @AfterEach
    void stop() {
        client.close();
        api.close();
    }

    private void pending(String name) {
        client.pods().resource(new PodBuilder().withNewMetadata().withName(name).withNamespace("default").endMetadata()
                .withNewSpec().addNewContainer().withName("main").withImage("train").endContainer().endSpec().build()).create();
    }

    /** As kube-scheduler's binder posts it: the pods/binding subresource. */
    private HttpResponse<String> bind(String pod, String node) throws Exception {
        var body = "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"" + pod + "\",\"namespace\":\"default\"},"
                + "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"" + node + "\"}}";
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(api.url() + "/api/v1/namespaces/default/pods/" + pod + "/binding"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aBindingSetsTheNodeAndASecondIsAConflict() throws Exception {
        pending("train");
        assertThat(bind("train", "gpu-1").statusCode()).isEqualTo(201);
        assertThat(client.pods().inNamespace("default").withName("train").get().getSpec().getNodeName()).isEqualTo("gpu-1");

        var again = bind("train", "gpu-2");
        assertThat(again.statusCode()).isEqualTo(409);
        var status = new ObjectMapper().readTree(again.body());
        assertThat(status.path("kind").asText()).isEqualTo("Status");
        assertThat(status.path("reason").asText()).isEqualTo("Conflict");
        assertThat(status.path("message").asText()).contains("already assigned to node \"gpu-1\"");
        assertThat(client.pods().inNamespace("default").withName("train").get().getSpec().getNodeName()).isEqualTo("gpu-1");
    }

    @Test
    void aMissingPodIsNotFound() throws Exception {
        var missing = bind("gone", "gpu-1");
        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(new ObjectMapper().readTree(missing.body()).path("reason").asText()).isEqualTo("NotFound");
    }

    @Test
    void fabric8sBindingsCollectionBindsToo() {
        pending("serve");
        client.bindings().inNamespace("default").resource(new BindingBuilder().withNewMetadata().withName("serve").endMetadata()
                .withNewTarget().withKind("Node").withName("cpu-1").endTarget().build()).create();
        assertThat(client.pods().inNamespace("default").withName("serve").get().getSpec().getNodeName()).isEqualTo("cpu-1");
        assertThatThrownBy(() -> client.bindings().inNamespace("default").resource(new BindingBuilder().withNewMetadata().withName("serve")
                .endMetadata().withNewTarget().withKind("Node").withName("cpu-2").endTarget().build()).create())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    }
}
