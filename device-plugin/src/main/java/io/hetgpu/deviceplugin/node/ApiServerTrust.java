package io.hetgpu.deviceplugin.node;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * How the plugin trusts its API server: through the CA its configuration names (in a pod, the service account's
 * {@code ca.crt}) and that CA alone, as client-go does. Left to itself, fabric8 adds that CA to the Java runtime's
 * public ones (about 140 of them, a trust store the plugin keeps: some 0.4 MiB of its memory), so that a certificate
 * any public CA issued for the API server's address would pass too.
 *
 * <p>fabric8 reads the runtime's CAs from the file {@code javax.net.ssl.trustStore} names; JSSE's {@code NONE} names no
 * file, which gives an empty store for the named CA to go into. The plugin opens no other TLS connection (kubelet's
 * sockets are local and in the clear), so the setting reaches nothing else. It is left alone where a CA is not named
 * (a kubeconfig that relies on the public CAs) and where the operator has set it.
 */
public final class ApiServerTrust {

    static final String TRUST_STORE = "javax.net.ssl.trustStore";
    static final String NO_FILE = "NONE";

    private ApiServerTrust() {
    }

    /** A client of the API server that fabric8's configuration finds (in a pod, its own), trusting the named CA alone. */
    public static KubernetesClient connect() {
        var config = Config.autoConfigure(null);
        trustNamedCaAlone(config);
        return new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(new ClosingHttpClientFactory()).build();
    }

    /** @return whether the runtime's public CAs are now left out of the API server's trust */
    static boolean trustNamedCaAlone(Config config) {
        boolean namesCa = isSet(config.getCaCertFile()) || isSet(config.getCaCertData());
        if (!namesCa || config.isTrustCerts() || isSet(config.getTrustStoreFile()) || System.getProperty(TRUST_STORE) != null) {
            return false;
        }
        System.setProperty(TRUST_STORE, NO_FILE);
        return true;
    }

    private static boolean isSet(String value) {
        return value != null && !value.isBlank();
    }
}
