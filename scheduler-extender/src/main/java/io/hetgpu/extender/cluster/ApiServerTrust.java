package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.client.Config;

/**
 * The extender trusts its API server through the CA its configuration names (in a pod, the service account's
 * {@code ca.crt}; a kubeconfig's {@code certificate-authority}) and that CA alone, as client-go and kube-scheduler do.
 * Left to itself, fabric8 adds that CA to the Java runtime's public ones, so that a certificate any of some 140 public
 * CAs issued for the API server's address would pass too; it reads them from the file {@code javax.net.ssl.trustStore}
 * names, and JSSE's {@code NONE} names none. The extender's own TLS (the verbs' server and the client certificates it
 * checks) trusts the CA its flags name, which that setting does not reach. Left alone where no CA is named (a
 * kubeconfig that relies on the public CAs) and where the operator has set it.
 */
public final class ApiServerTrust {

    static final String TRUST_STORE = "javax.net.ssl.trustStore";

    private ApiServerTrust() {
    }

    /** @return {@code config}, after which a client built from it trusts the named CA alone where one is named */
    public static Config namedCaAlone(Config config) {
        boolean namesCa = isSet(config.getCaCertFile()) || isSet(config.getCaCertData());
        if (namesCa && !config.isTrustCerts() && !isSet(config.getTrustStoreFile()) && System.getProperty(TRUST_STORE) == null) {
            System.setProperty(TRUST_STORE, "NONE");
        }
        return config;
    }

    private static boolean isSet(String value) {
        return value != null && !value.isBlank();
    }
}
