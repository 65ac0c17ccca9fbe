package io.hetgpu.testcluster.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
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
}
