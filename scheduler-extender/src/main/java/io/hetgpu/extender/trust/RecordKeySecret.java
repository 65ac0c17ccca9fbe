package io.hetgpu.extender.trust;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.hetgpu.extender.cluster.ApiFaults;
import java.security.SecureRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import java.util.Base64;

/**
 * The record key as every replica reads it: the Secret {@code name} in the extender's own namespace, created with a new
 * random key by whichever replica finds it absent first. Replicas starting together all try to create it; the API server
 * lets one create win, and the others (409 Conflict) read the one that won, so all end with the same key. Deleting the
 * Secret makes a new key at the next start, and records signed with the old one are no longer trusted.
 */
public final class RecordKeySecret implements AutoCloseable {

    /** The Secret's one data key. */
    public static final String DATA_KEY = "key";

    private static final Logger LOG = LoggerFactory.getLogger(RecordKeySecret.class);
    private static final long MAX_WAIT_MS = 32_000;

    private final KubernetesClient client;
    private final String namespace;
    private final String name;
    private final SecureRandom random;
    private volatile boolean closed;

    public RecordKeySecret(KubernetesClient client, String namespace, String name, SecureRandom random) {
        this.client = client;
        this.namespace = namespace;
        this.name = name;
        this.random = random;
    }

    /**
     * The key: read, or created and then read back where another replica created it first. {@link IllegalStateException}
     * with one line naming the Secret and its field when what is there is not a key;
     * {@link KubernetesClientException} when the API server cannot be reached or refuses.
     */
    public RecordKey getOrCreate() {
        var found = secrets().get();
        if (found != null) {
            return keyOf(found);
        }
        var fresh = RecordKey.random(random);
        try {
            client.secrets().inNamespace(namespace).resource(new SecretBuilder().withNewMetadata().withName(name).withNamespace(namespace)
                            .addToLabels("app.kubernetes.io/part-of", "hetgpu").endMetadata()
                            .withType("Opaque").addToData(DATA_KEY, Base64.getEncoder().encodeToString(fresh.bytes())).build())
                    .create();
            return fresh;
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            // Another replica created it between our read and our create: its key is the one.
            var won = secrets().get();
            if (won == null) {
                throw new IllegalStateException("Secret " + where() + " was created by another replica and deleted again at once");
            }
            return keyOf(won);
        }
    }

    /**
     * The key once {@link #getOrCreate} has given it, trying again after each failure (an API server down or refusing, a
     * Secret that holds no key) for ever, waiting 1 s doubling to 32 s between tries, and saying each failure in one line.
     */
    public CompletableFuture<RecordKey> whenRead() {
        return attempt(0);
    }

    private CompletableFuture<RecordKey> attempt(int failures) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("stopped before the record key was read"));
        }
        return CompletableFuture.supplyAsync(this::getOrCreate, call -> Thread.ofVirtual().name("record-key").start(call)).handle((key, failure) -> {
            if (failure == null) {
                if (failures > 0) {
                    LOG.info("record key read from Secret {} after {} failed attempts", where(), failures);
                }
                return CompletableFuture.completedFuture(key);
            }
            var cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            long waitMs = Math.min(MAX_WAIT_MS, 1000L << Math.min(failures, 5));
            LOG.warn("reading the record key from Secret {} failed, retrying in {} s: {}", where(), waitMs / 1000, ApiFaults.describe(cause));
            return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(waitMs, TimeUnit.MILLISECONDS))
                    .thenCompose(waited -> attempt(failures + 1));
        }).thenCompose(next -> next);
    }

    /** Stops trying to read the key. */
    @Override
    public void close() {
        closed = true;
    }

    /** namespace/name, for messages. */
    public String where() {
        return namespace + "/" + name;
    }

    private io.fabric8.kubernetes.client.dsl.Resource<Secret> secrets() {
        return client.secrets().inNamespace(namespace).withName(name);
    }

    private RecordKey keyOf(Secret secret) {
        var data = secret.getData();
        var encoded = data == null ? null : data.get(DATA_KEY);
        if (encoded == null) {
            throw new IllegalStateException("Secret " + where() + ": data." + DATA_KEY + " missing (delete the Secret to have a new key made)");
        }
        try {
            return RecordKey.of(Base64.getDecoder().decode(encoded));
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("Secret " + where() + ": data." + DATA_KEY + ": " + e.getMessage()
                    + " (delete the Secret to have a new key made)");
        }
    }
}
