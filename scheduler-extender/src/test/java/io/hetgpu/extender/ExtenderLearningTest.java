package io.hetgpu.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.hetgpu.extender.cluster.LearnedThroughputsConfigMap;
import io.hetgpu.extender.http.ServerOptions;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** With an API server the extender learns by default, keeping what it learns in its own namespace; off, it asks nothing. */
class ExtenderLearningTest {

    private static final String NAMESPACE = "hetgpu-system";

    @Test
    void byDefaultTheExtenderKeepsWhatItLearnsInItsNamespaceAndItsLearningThreadEndsWithIt() throws Exception {
        try (var api = BindingApiServer.start();
             var client = new KubernetesClientBuilder().withConfig(new ConfigBuilder(api.client().getConfiguration())
                     .withNamespace(NAMESPACE).build()).build()) {
            var config = ExtenderConfig.DEFAULTS;
            var extender = Extender.start(config, new ServerOptions("127.0.0.1", 0, config.bodyLimitBytes(), null, null), Optional.of(client));
            extender.synced().orTimeout(30, TimeUnit.SECONDS).join();

            assertThat(extender.learning()).isPresent();
            await().atMost(Duration.ofSeconds(20)).until(() ->
                    api.client().configMaps().inNamespace(NAMESPACE).withName(LearnedThroughputsConfigMap.NAME).get() != null);
            extender.close();

            assertThat(Thread.getAllStackTraces().keySet()).noneMatch(thread -> thread.getName().equals("throughput-learning") && thread.isAlive());
        }
    }

    @Test
    void withLearningOffNothingIsLearnedOrKept() throws Exception {
        var config = ExtenderConfig.parse("""
                version: v1
                policy:
                  learning:
                    enabled: false
                """, "test");
        try (var api = BindingApiServer.start();
             var client = new KubernetesClientBuilder().withConfig(new ConfigBuilder(api.client().getConfiguration())
                     .withNamespace(NAMESPACE).build()).build();
             var extender = Extender.start(config, new ServerOptions("127.0.0.1", 0, config.bodyLimitBytes(), null, null), Optional.of(client))) {
            extender.synced().orTimeout(30, TimeUnit.SECONDS).join();

            assertThat(extender.learning()).isEmpty();
            assertThat(api.client().configMaps().inNamespace(NAMESPACE).list().getItems()).isEmpty();
        }
    }
}
