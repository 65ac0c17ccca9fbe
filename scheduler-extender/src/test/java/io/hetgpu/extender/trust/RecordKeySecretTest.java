package io.hetgpu.extender.trust;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.hetgpu.extender.BindingApiServer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The record key's Secret: read when there, made when absent, and the same key for replicas that start together. */
class RecordKeySecretTest {

    private static final String NAMESPACE = "hetgpu-system";
    private static final String NAME = "hetgpu-record-key";
    private static final String PATH = "/api/v1/namespaces/" + NAMESPACE + "/secrets/" + NAME;

    @Test
    void makesTheKeyWhenAbsentAndReadsItBackAfterwards() {
        try (var api = BindingApiServer.start()) {
            var made = new RecordKeySecret(api.client(), NAMESPACE, NAME, new SecureRandom()).getOrCreate();

            var stored = api.client().secrets().inNamespace(NAMESPACE).withName(NAME).get();
            assertThat(Base64.getDecoder().decode(stored.getData().get(RecordKeySecret.DATA_KEY))).hasSize(RecordKey.BYTES).isEqualTo(made.bytes());
            var read = new RecordKeySecret(api.client(), NAMESPACE, NAME, new SecureRandom()).getOrCreate();
            assertThat(read.bytes()).isEqualTo(made.bytes());
        }
    }

    @Test
    void replicasStartingTogetherEndWithOneKey() throws Exception {
        try (var api = BindingApiServer.start(); var pool = Executors.newFixedThreadPool(8)) {
            var go = new CountDownLatch(1);
            var replicas = new ArrayList<java.util.concurrent.Future<byte[]>>();
            for (int i = 0; i < 8; i++) {
                Callable<byte[]> start = () -> {
                    go.await();
                    return new RecordKeySecret(api.client(), NAMESPACE, NAME, new SecureRandom()).getOrCreate().bytes();
                };
                replicas.add(pool.submit(start));
            }
            go.countDown();
            var keys = new HashSet<String>();
            for (var replica : replicas) {
                keys.add(Base64.getEncoder().encodeToString(replica.get(30, TimeUnit.SECONDS)));
            }
            assertThat(keys).hasSize(1);
        }
    }

    /** The race step by step: absent when read, then another replica's create wins (409), and its key is the one used. */
    @Test
    void aReplicaThatLosesTheCreateUsesTheKeyThatWon() {
        var server = new KubernetesMockServer(false);
        server.init();
        try (KubernetesClient client = server.createClient()) {
            var winner = new byte[RecordKey.BYTES];
            java.util.Arrays.fill(winner, (byte) 3);
            server.expect().get().withPath(PATH).andReturn(404, new StatusBuilder().withCode(404).build()).once();
            server.expect().post().withPath("/api/v1/namespaces/" + NAMESPACE + "/secrets")
                    .andReturn(409, new StatusBuilder().withCode(409).withReason("AlreadyExists").build()).once();
            server.expect().get().withPath(PATH).andReturn(200, new SecretBuilder().withNewMetadata().withName(NAME).withNamespace(NAMESPACE)
                    .endMetadata().addToData(RecordKeySecret.DATA_KEY, Base64.getEncoder().encodeToString(winner)).build()).once();

            var key = new RecordKeySecret(client, NAMESPACE, NAME, new SecureRandom()).getOrCreate();

            assertThat(key.bytes()).isEqualTo(winner);
        } finally {
            server.destroy();
        }
    }

    @Test
    void aSecretWithoutAUsableKeyIsOneLineNamingTheSecretAndField() {
        try (var api = BindingApiServer.start()) {
            api.client().secrets().inNamespace(NAMESPACE).resource(new SecretBuilder().withNewMetadata().withName(NAME).endMetadata()
                    .addToData(RecordKeySecret.DATA_KEY, Base64.getEncoder().encodeToString(new byte[5])).build()).create();

            assertThatThrownBy(() -> new RecordKeySecret(api.client(), NAMESPACE, NAME, new SecureRandom()).getOrCreate())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("Secret hetgpu-system/hetgpu-record-key: data.key: expected a key of at least 32 bytes, got 5 "
                            + "(delete the Secret to have a new key made)");
        }
    }
}
