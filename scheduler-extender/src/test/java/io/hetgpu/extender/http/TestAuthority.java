package io.hetgpu.extender.http;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A certificate authority of a test's own, as an admin makes one with openssl for mutual TLS: it issues the extender's
 * server certificate and callers' client certificates, each written as PEM files the extender's flags take.
 */
final class TestAuthority {

    private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

    private final X500Name name;
    private final KeyPair keys;
    private final X509Certificate certificate;
    private final Path dir;

    /** A certificate and its private key, as objects and as PEM files. */
    record Issued(X509Certificate certificate, KeyPair keys, Path certificatePem, Path keyPem) {
    }

    private TestAuthority(X500Name name, KeyPair keys, X509Certificate certificate, Path dir) {
        this.name = name;
        this.keys = keys;
        this.certificate = certificate;
        this.dir = dir;
    }

    static TestAuthority create(Path dir, String commonName) {
        var name = new X500Name("CN=" + commonName);
        var keys = newKeys();
        try {
            org.bouncycastle.cert.X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name, serial(), notBefore(), notAfter(), name, keys.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            var certificate = sign(builder, keys);
            var authority = new TestAuthority(name, keys, certificate, dir);
            write(authority.certificatePem(), pem("CERTIFICATE", certificate.getEncoded()));
            return authority;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The CA's own certificate: what {@code --tls-client-ca} (and a client's trust, for the server) is given. */
    Path certificatePem() {
        return dir.resolve(fileName() + "-ca.pem");
    }

    /** A server certificate for {@code localhost} and 127.0.0.1, for TLS server authentication only. */
    Issued server(String commonName) {
        return issue(commonName, KeyPurposeId.id_kp_serverAuth, new GeneralNames(new GeneralName[] {
                new GeneralName(GeneralName.dNSName, "localhost"), new GeneralName(GeneralName.iPAddress, "127.0.0.1")}));
    }

    /** A client certificate, for TLS client authentication only, as kube-scheduler's extender tlsConfig certFile. */
    Issued client(String commonName) {
        return issue(commonName, KeyPurposeId.id_kp_clientAuth, null);
    }

    private Issued issue(String commonName, KeyPurposeId purpose, GeneralNames altNames) {
        var leafKeys = newKeys();
        try {
            org.bouncycastle.cert.X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name, serial(), notBefore(), notAfter(), new X500Name("CN=" + commonName),
                    leafKeys.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                    .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purpose));
            if (altNames != null) {
                builder.addExtension(Extension.subjectAlternativeName, false, altNames);
            }
            var leaf = sign(builder, keys);
            var base = dir.resolve(fileName() + "-" + commonName.replaceAll("[^A-Za-z0-9-]", "_"));
            var certificatePem = Path.of(base + ".pem");
            var keyPem = Path.of(base + "-key.pem");
            write(certificatePem, pem("CERTIFICATE", leaf.getEncoded()));
            write(keyPem, pem("PRIVATE KEY", leafKeys.getPrivate().getEncoded()));
            return new Issued(leaf, leafKeys, certificatePem, keyPem);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A client's TLS context: it trusts this authority's server certificates and presents {@code client} when asked
     * (none when null).
     */
    SSLContext clientContext(Issued client) {
        try {
            var trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", certificate);
            var trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trustManagers.init(trust);
            var keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            var identity = KeyStore.getInstance("PKCS12");
            identity.load(null, null);
            if (client != null) {
                identity.setKeyEntry("client", client.keys().getPrivate(), new char[0], new X509Certificate[] {client.certificate()});
            }
            keyManagers.init(identity, new char[0]);
            var context = SSLContext.getInstance("TLS");
            context.init(keyManagers.getKeyManagers(), trustManagers.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private String fileName() {
        return name.toString().substring(3).replaceAll("[^A-Za-z0-9-]", "_");
    }

    private static X509Certificate sign(org.bouncycastle.cert.X509v3CertificateBuilder builder, KeyPair issuer) throws GeneralSecurityException {
        try {
            var signer = new JcaContentSignerBuilder("SHA256withECDSA").build(issuer.getPrivate());
            return new JcaX509CertificateConverter().getCertificate(builder.build(signer));
        } catch (org.bouncycastle.operator.OperatorCreationException e) {
            throw new GeneralSecurityException(e);
        }
    }

    /** P-256: made in a millisecond, where an RSA key takes a second on a busy machine. */
    private static KeyPair newKeys() {
        try {
            var generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new java.security.spec.ECGenParameterSpec("secp256r1"));
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static BigInteger serial() {
        return BigInteger.valueOf(SERIAL.incrementAndGet());
    }

    private static Date notBefore() {
        return Date.from(Instant.now().minus(Duration.ofHours(1)));
    }

    private static Date notAfter() {
        return Date.from(Instant.now().plus(Duration.ofDays(1)));
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    private static void write(Path file, String text) {
        try {
            Files.writeString(file, text, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
