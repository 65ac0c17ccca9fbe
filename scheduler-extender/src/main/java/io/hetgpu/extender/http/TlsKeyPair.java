package io.hetgpu.extender.http;

import io.vertx.core.Vertx;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.util.Collections;
import javax.net.ssl.X509KeyManager;

/**
 * Checks a PEM certificate and key at start: a pair that does not match would otherwise listen happily and fail
 * every handshake, which kube-scheduler reports as an unreachable extender on every pod.
 */
final class TlsKeyPair {

    private TlsKeyPair() {
    }

    /**
     * @return the key and certificate as Vert.x loads them
     * @throws IllegalArgumentException naming both files when they cannot be read or do not belong together
     */
    static PemKeyCertOptions check(Vertx vertx, Path cert, Path key) {
        var options = new PemKeyCertOptions().setCertPath(cert.toString()).setKeyPath(key.toString());
        var pair = "TLS certificate " + cert + " and key " + key;
        PrivateKey privateKey;
        PublicKey publicKey;
        try {
            var store = options.loadKeyStore(vertx);
            var manager = (X509KeyManager) options.getKeyManagerFactory(vertx).getKeyManagers()[0];
            var alias = Collections.list(store.aliases()).getFirst();
            privateKey = manager.getPrivateKey(alias);
            publicKey = manager.getCertificateChain(alias)[0].getPublicKey();
        } catch (Exception e) {
            throw new IllegalArgumentException(pair + " cannot be read as PEM: " + e.getMessage(), e);
        }
        if (!privateKey.getAlgorithm().equals(publicKey.getAlgorithm()) || !signs(privateKey, publicKey)) {
            throw new IllegalArgumentException(pair + " do not match: the key is not the certificate's private key ("
                    + privateKey.getAlgorithm() + " key, " + publicKey.getAlgorithm() + " certificate)");
        }
        return options;
    }

    /**
     * The CA(s) callers' client certificates must verify against, checked at start as the key pair is: a file
     * that holds no certificate would otherwise refuse every caller, kube-scheduler included, at the handshake.
     *
     * @throws IllegalArgumentException naming the file when it cannot be read or holds no PEM certificate
     */
    static PemTrustOptions checkClientCa(Vertx vertx, Path ca) {
        var options = new PemTrustOptions().addCertPath(ca.toString());
        int certificates;
        try {
            certificates = options.loadKeyStore(vertx).size();
        } catch (Exception e) {
            throw new IllegalArgumentException("TLS client CA " + ca + " cannot be read as PEM certificates: " + e.getMessage(), e);
        }
        if (certificates == 0) {
            throw new IllegalArgumentException("TLS client CA " + ca + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
        }
        return options;
    }

    /** Whether a signature made with the private key verifies with the public one: true only for a key pair. */
    private static boolean signs(PrivateKey privateKey, PublicKey publicKey) {
        var algorithm = switch (privateKey.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "DSA" -> "SHA256withDSA";
            default -> privateKey.getAlgorithm(); // EdDSA, Ed25519, Ed448 name their own signature
        };
        try {
            var data = new byte[32];
            new SecureRandom().nextBytes(data);
            var signer = Signature.getInstance(algorithm);
            signer.initSign(privateKey);
            signer.update(data);
            var signature = signer.sign();
            var verifier = Signature.getInstance(algorithm);
            verifier.initVerify(publicKey);
            verifier.update(data);
            return verifier.verify(signature);
        } catch (java.security.GeneralSecurityException e) {
            return false;
        }
    }
}
