package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A kubeconfig read as kubectl reads it; what is wrong with one said in a line naming the field and the value. */
class KubeconfigFileTest {

    private static final String VALID = """
            apiVersion: v1
            kind: Config
            clusters: [{name: lab, cluster: {server: "https://10.0.0.1:6443", certificate-authority: certs/ca.crt}}]
            contexts: [{name: lab, context: {cluster: lab, user: admin, namespace: ml}}]
            current-context: lab
            users: [{name: admin, user: {token: abc}}]
            """;

    @TempDir
    Path dir;

    @Test
    void filesItNamesAreReadBesideItAsKubectlReadsThem() throws Exception {
        var file = Files.writeString(Files.createDirectories(dir.resolve("kube")).resolve("config"), VALID);

        var config = KubeconfigFile.read(file, null);

        assertThat(config.getMasterUrl()).startsWith("https://10.0.0.1:6443");
        assertThat(config.getNamespace()).isEqualTo("ml");
        assertThat(Path.of(config.getCaCertFile())).isEqualTo(dir.resolve("kube/certs/ca.crt").toAbsolutePath());
        assertThat(KubeconfigFile.read(file, "lab").getNamespace()).isEqualTo("ml");
    }

    @Test
    void aContextItDoesNotHoldIsRefusedNotSwappedForTheCurrentOne() throws Exception {
        var file = Files.writeString(dir.resolve("config"), VALID);

        assertThatThrownBy(() -> KubeconfigFile.read(file, "prod"))
                .hasMessage(file + ": no context \"prod\" (its contexts: lab)");
    }

    @Test
    void aFieldOfTheWrongShapeIsNamedWithItsValue() throws Exception {
        var clusters = Files.writeString(dir.resolve("clusters"), "apiVersion: v1\nkind: Config\nclusters: 5\n");
        var flag = Files.writeString(dir.resolve("flag"), VALID.replace("certificate-authority: certs/ca.crt", "insecure-skip-tls-verify: maybe"));

        assertThatThrownBy(() -> KubeconfigFile.read(clusters, null)).hasMessage(clusters + ": clusters: expected a list, got \"5\"");
        assertThatThrownBy(() -> KubeconfigFile.read(flag, null))
                .hasMessage(flag + ": clusters[0].cluster.insecure-skip-tls-verify: expected true or false, got \"maybe\"");
    }

    @Test
    void whatIsNotAKubeconfigAtAllIsSaidSo() throws Exception {
        var text = Files.writeString(dir.resolve("hostname"), "gpu-node-7\n");
        var yaml = Files.writeString(dir.resolve("broken"), "clusters: [1\n");

        assertThatThrownBy(() -> KubeconfigFile.read(text, null))
                .hasMessage(text + ": expected a kubeconfig, a mapping with clusters, contexts and users, got \"gpu-node-7\"");
        assertThatThrownBy(() -> KubeconfigFile.read(yaml, null)).hasMessageStartingWith(yaml + ": line ").hasMessageContaining(": not YAML: ")
                .message().doesNotContain("\n");
        assertThatThrownBy(() -> KubeconfigFile.read(dir.resolve("missing"), null)).hasMessage(dir.resolve("missing") + ": cannot be read (no such file)");
        assertThatThrownBy(() -> KubeconfigFile.read(dir, null)).hasMessageStartingWith(dir + ": cannot be read (");
    }
}
