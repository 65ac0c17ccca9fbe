package io.hetgpu.testcluster.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ApiServerTest {

    @Test
    void informersOfOneClientSeeWritesOfAnother(@TempDir Path dir) throws Exception {
        try (var api = ApiServer.start();
             var writer = api.newClient();
             var reader = new KubernetesClientBuilder().withConfig(io.fabric8.kubernetes.client.Config.fromKubeconfig(
                     java.nio.file.Files.readString(api.writeKubeconfig(dir.resolve("kubeconfig"))))).build()) {
            var seen = new CopyOnWriteArrayList<String>();
            var informer = reader.nodes().inform(new ResourceEventHandler<Node>() {
                @Override public void onAdd(Node node) { seen.add("add " + node.getMetadata().getName()); }
                @Override public void onUpdate(Node old, Node node) { seen.add("update " + node.getMetadata().getLabels()); }
                @Override public void onDelete(Node node, boolean unknown) { seen.add("delete " + node.getMetadata().getName()); }
            });

            writer.nodes().resource(new NodeBuilder().withNewMetadata().withName("gpu-1").endMetadata().build()).create();
            writer.nodes().withName("gpu-1").patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"labels\":{\"hetgpu.io/gpu.present\":\"true\"}}}");

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(seen).contains("add gpu-1", "update {hetgpu.io/gpu.present=true}"));
            informer.close();
        }
    }

    @Test
    void aClientOfferingH2cIsAnsweredInHttp11() throws Exception {
        // The JDK client, HTTP/2 by default, asks to upgrade over plain HTTP; a client made from a kubeconfig alone
        // (hetgpu explain, a component's --kubeconfig) has no setting that stops it.
        try (var api = ApiServer.start(); var http = HttpClient.newHttpClient()) {
            var response = http.send(HttpRequest.newBuilder(URI.create(api.url() + "/api/v1/nodes")).build(), HttpResponse.BodyHandlers.ofString());

            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
        }
    }

    @Test
    void aWatchClosedWhileItsEventsAreSentHoldsUpNoOtherRequest() throws Exception {
        // fabric8's mock waits, on the server's event loop, for a closed watch's sender, while that sender waits for the
        // event loop to write its event: every connection on that loop stalled for 30 s (an informer stopped mid-burst).
        try (var api = ApiServer.start(); var writer = api.newClient()) {
            writer.nodes().resource(new NodeBuilder().withNewMetadata().withName("gpu-1").endMetadata().build()).create();
            for (int round = 0; round < 20; round++) {
                try (var watcher = api.newClient()) {
                    var watch = watcher.nodes().watch(new Watcher<Node>() {
                        @Override public void eventReceived(Action action, Node node) { }
                        @Override public void onClose(WatcherException cause) { }
                    });
                    for (int i = 0; i < 20; i++) {
                        writer.nodes().withName("gpu-1").patch(PatchContext.of(PatchType.JSON_MERGE),
                                "{\"metadata\":{\"labels\":{\"burst\":\"" + round + "-" + i + "\"}}}");
                    }
                    watch.close();
                }
                // A connection of its own for each of more requests than the server has event loops: one lands on the loop
                // the watch was on.
                for (int i = 0; i < 2 * Runtime.getRuntime().availableProcessors() + 1; i++) {
                    try (var http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
                        var response = http.send(HttpRequest.newBuilder(URI.create(api.url() + "/api/v1/nodes/gpu-1"))
                                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                        assertThat(response.statusCode()).isEqualTo(200);
                    }
                }
            }
        }
    }
}
