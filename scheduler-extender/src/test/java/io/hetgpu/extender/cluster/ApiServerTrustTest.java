package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.internal.SSLUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.X509TrustManager;

import static org.assertj.core.api.Assertions.assertThat;

/** The extender trusts its API server through the CA its configuration names and nothing else. */
class ApiServerTrustTest {

    @AfterEach
    void restoreTheRuntimesTrust() {
        System.clearProperty(ApiServerTrust.TRUST_STORE);
    }

    @Test
    void withACaNamedOnlyThatCaIsTrusted() throws Exception {
        var config = new ConfigBuilder(Config.empty()).withMasterUrl("https://10.96.0.1:443").withCaCertFile(clusterCa()).build();
        assertThat(issuersTrusted(config)).as("fabric8's own choice: the named CA among the runtime's").hasSizeGreaterThan(50);

        var trusting = ApiServerTrust.namedCaAlone(config);

        assertThat(issuersTrusted(trusting)).singleElement().asString().contains("CN=hetgpu test cluster CA");
    }

    @Test
    void withNoCaNamedOrTheOperatorsOwnStoreTheRuntimesCasStay() {
        ApiServerTrust.namedCaAlone(new ConfigBuilder(Config.empty()).withMasterUrl("https://api.example.com").build());
        assertThat(System.getProperty(ApiServerTrust.TRUST_STORE)).isNull();

        System.setProperty(ApiServerTrust.TRUST_STORE, "/etc/pki/operators.p12");
        ApiServerTrust.namedCaAlone(new ConfigBuilder(Config.empty()).withCaCertFile(clusterCa()).build());
        assertThat(System.getProperty(ApiServerTrust.TRUST_STORE)).isEqualTo("/etc/pki/operators.p12");
    }

    private static String clusterCa() {
        try {
            return Path.of(ApiServerTrustTest.class.getResource("cluster-ca.pem").toURI()).toString();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<?> issuersTrusted(Config config) throws Exception {
        return Arrays.stream(SSLUtils.trustManagers(config)).filter(X509TrustManager.class::isInstance)
                .flatMap(manager -> Arrays.stream(((X509TrustManager) manager).getAcceptedIssuers())).toList();
    }
}
