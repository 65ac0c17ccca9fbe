package io.hetgpu.deviceplugin.node;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.internal.SSLUtils;
import io.hetgpu.deviceplugin.training.StandInApiServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.X509TrustManager;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The plugin trusts its API server through the CA its configuration names and nothing else; fabric8 alone would also
 * trust every public CA of the Java runtime.
 */
class ApiServerTrustTest {

    @TempDir
    Path folder;

    @AfterEach
    void restoreTheRuntimesTrust() {
        System.clearProperty(ApiServerTrust.TRUST_STORE);
    }

    @Test
    void withACaNamedTheApiServerIsTrustedThroughItAlone() throws Exception {
        try (var apiServer = StandInApiServer.started(folder, "gpu-1")) {
            var config = configFor(apiServer);
            assertThat(issuersTrusted(config)).as("fabric8's own choice: the named CA among the runtime's").hasSizeGreaterThan(50);

            assertThat(ApiServerTrust.trustNamedCaAlone(config)).isTrue();

            assertThat(issuersTrusted(config)).hasSize(1);
            try (var client = new KubernetesClientBuilder().withConfig(config).build()) {
                assertThat(client.nodes().withName("gpu-1").get().getMetadata().getName()).isEqualTo("gpu-1");
            }
        }
    }

    @Test
    void withNoCaNamedTheRuntimesCasStay() {
        var config = new ConfigBuilder(Config.empty()).withMasterUrl("https://10.96.0.1:443").build();

        assertThat(ApiServerTrust.trustNamedCaAlone(config)).isFalse();

        assertThat(System.getProperty(ApiServerTrust.TRUST_STORE)).isNull();
    }

    @Test
    void anOperatorsOwnTrustStoreIsLeftAlone() throws Exception {
        System.setProperty(ApiServerTrust.TRUST_STORE, folder.resolve("operators.p12").toString());
        try (var apiServer = StandInApiServer.started(folder, "gpu-1")) {
            assertThat(ApiServerTrust.trustNamedCaAlone(configFor(apiServer))).isFalse();
        }
        assertThat(System.getProperty(ApiServerTrust.TRUST_STORE)).isEqualTo(folder.resolve("operators.p12").toString());
    }

    private static Config configFor(StandInApiServer apiServer) {
        return new ConfigBuilder(Config.empty()).withMasterUrl(apiServer.url()).withCaCertFile(apiServer.caFile().toString())
                .withRequestRetryBackoffLimit(0).build();
    }

    private static List<?> issuersTrusted(Config config) throws Exception {
        return Arrays.stream(SSLUtils.trustManagers(config)).filter(X509TrustManager.class::isInstance)
                .flatMap(manager -> Arrays.stream(((X509TrustManager) manager).getAcceptedIssuers())).toList();
    }
}
