package io.hetgpu.deviceplugin.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.hetgpu.deviceplugin.training.StandInApiServer;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Closing the plugin's API server client ends the JDK HTTP clients under it, whose selector threads would otherwise
 * hold the JVM's exit back; until then they serve as fabric8's own would.
 */
class ClosingHttpClientFactoryTest {

    @TempDir
    Path folder;

    @Test
    void theJdkClientsServeUntilTheKubernetesClientClosesAndEndWithIt() throws Exception {
        var factory = new ClosingHttpClientFactory();
        try (var apiServer = StandInApiServer.started(folder, "gpu-1")) {
            var config = new ConfigBuilder(Config.empty()).withMasterUrl(apiServer.url()).withCaCertFile(apiServer.caFile().toString())
                    .withRequestRetryBackoffLimit(0).withConnectionTimeout(5_000).build();
            var client = new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(factory).build();

            assertThat(client.nodes().withName("gpu-1").get().getMetadata().getName()).isEqualTo("gpu-1");
            // A watch, as the plugin's pod informer keeps one: its client is derived from this one, on the same JDK client.
            var watch = client.pods().inAnyNamespace().withField("spec.nodeName", "gpu-1").watch(new Watcher<>() {
                @Override
                public void eventReceived(Action action, Pod pod) {
                }

                @Override
                public void onClose(WatcherException cause) {
                }
            });
            assertThat(factory.built()).hasSize(1).noneMatch(HttpClient::isTerminated);
            watch.close();

            client.close();

            await().atMost(Duration.ofSeconds(10)).until(() -> factory.built().stream().allMatch(HttpClient::isTerminated));
        }
    }

    @Test
    void whatTheBuilderIsToldReachesTheClientItBuilds() {
        var factory = new ClosingHttpClientFactory();
        try (var client = factory.createNewHttpClientBuilder().connectTimeout(Duration.ofSeconds(7)).version(HttpClient.Version.HTTP_1_1)
                .followRedirects(HttpClient.Redirect.NORMAL).build()) {
            assertThat(factory.built()).containsExactly(client);
            assertThat(client.connectTimeout()).contains(Duration.ofSeconds(7));
            assertThat(client.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
            assertThat(client.followRedirects()).isEqualTo(HttpClient.Redirect.NORMAL);
        }
    }
}
