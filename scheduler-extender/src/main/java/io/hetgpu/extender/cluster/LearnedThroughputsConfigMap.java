package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.hetgpu.extender.throughput.LearnedState;
import io.hetgpu.extender.throughput.LearnedStateCodec;
import io.hetgpu.gpu.Quote;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Optional;

/**
 * The learned throughputs as the cluster keeps them across restarts: the ConfigMap {@value #NAME} in the extender's own
 * namespace, its {@value #DATA_KEY} the learner's state as {@link LearnedStateCodec} writes it, and the annotation
 * {@value #LEARNED_THROUGH} the end time of the newest pod run the state has seen (so that a restarted extender, whose
 * informers list again every pod that ended and is still there, does not count those runs twice).
 *
 * <p>Writes are optimistic: an update carries the resourceVersion last read or written, and a create is made only where
 * none was found. Another replica's write in between is answered with {@link Written.Conflict} (409), never overwritten
 * unseen; the caller reads again and decides ({@link ThroughputLearning} takes the newer of the two).
 * No method retries: one call, one request (two for a write that finds the object gone), so the caller bounds the time.
 */
public final class LearnedThroughputsConfigMap {

    public static final String NAME = "hetgpu-throughputs";
    public static final String DATA_KEY = "throughputs.json";
    /** The end of the newest pod run the state has seen, ISO-8601. */
    public static final String LEARNED_THROUGH = "hetgpu.io/learned-through";
    /**
     * What the data may take: an object, metadata included, is at most 1 MiB in etcd (1,048,576 bytes); the rest is left
     * for the metadata and managedFields, which the API server adds and the extender does not control.
     */
    public static final int MAX_DATA_CHARS = 900 * 1024;

    private final KubernetesClient client;
    private final String namespace;

    public LearnedThroughputsConfigMap(KubernetesClient client, String namespace) {
        this.client = client;
        this.namespace = namespace;
    }

    /** What a read found. */
    public sealed interface Stored {
        /** No ConfigMap: a first start. */
        record Absent() implements Stored {
        }

        /** A ConfigMap whose data is not a state: a clean start, said once; the next write replaces it. */
        record Unusable(String reason, String resourceVersion) implements Stored {
        }

        /** A state, as of {@code learnedThrough} (EPOCH when the annotation is missing or unreadable). */
        record Found(LearnedState state, Instant learnedThrough, String resourceVersion) implements Stored {
        }
    }

    /** What a write did. */
    public sealed interface Written {
        /** Stored; {@code resourceVersion} is the one the next update must carry. */
        record Done(String resourceVersion) implements Written {
        }

        /** Another writer came first (409): read again. Nothing was changed. */
        record Conflict(String message) implements Written {
        }
    }

    /** namespace/name, for messages. */
    public String where() {
        return namespace + "/" + NAME;
    }

    /** One GET. {@link KubernetesClientException} where the API server cannot be reached or refuses (not for 404). */
    public Stored read() {
        var found = resource().get();
        if (found == null) {
            return new Stored.Absent();
        }
        return stored(found);
    }

    /** What a ConfigMap holds, pure: a bad document is a reason naming the field and value, never an exception. */
    static Stored stored(ConfigMap map) {
        var version = map.getMetadata() == null ? null : map.getMetadata().getResourceVersion();
        var data = map.getData();
        var json = data == null ? null : data.get(DATA_KEY);
        if (json == null) {
            return new Stored.Unusable("data." + DATA_KEY + " missing", version);
        }
        LearnedState state;
        try {
            state = LearnedStateCodec.fromJson(json);
        } catch (IllegalArgumentException e) {
            // The codec names the field inside the document ("schema: expected 1, got 2"), or the document itself.
            var message = String.valueOf(e.getMessage());
            return new Stored.Unusable("data." + (message.startsWith(DATA_KEY) ? message : DATA_KEY + ": " + message), version);
        } catch (RuntimeException e) {
            // The codec says what is wrong for every document it refuses; anything else is still this one document's problem.
            return new Stored.Unusable("data." + DATA_KEY + ": " + Quote.cut(e), version);
        }
        var annotations = map.getMetadata() == null ? null : map.getMetadata().getAnnotations();
        return new Stored.Found(state, learnedThrough(annotations), version);
    }

    /** The annotation's instant, or EPOCH (every run then counts again: twice rather than never). */
    static Instant learnedThrough(Map<String, String> annotations) {
        var text = annotations == null ? null : annotations.get(LEARNED_THROUGH);
        if (text == null) {
            return Instant.EPOCH;
        }
        try {
            return Instant.parse(text.strip());
        } catch (DateTimeParseException e) {
            return Instant.EPOCH;
        }
    }

    /**
     * Stores {@code json} (already within {@link #MAX_DATA_CHARS}: {@link io.hetgpu.extender.throughput.StateFit}) as of {@code learnedThrough}: an update
     * carrying {@code knownVersion} where one is known, else a create. An update that finds the object deleted creates
     * it again. {@link KubernetesClientException} for any failure other than a conflict.
     */
    public Written write(String json, Instant learnedThrough, Optional<String> knownVersion) {
        if (json.length() > MAX_DATA_CHARS) {
            throw new IllegalArgumentException(DATA_KEY + ": " + json.length() + " characters, at most " + MAX_DATA_CHARS);
        }
        var builder = new ConfigMapBuilder().withNewMetadata().withName(NAME).withNamespace(namespace)
                .addToLabels("app.kubernetes.io/part-of", "hetgpu")
                .addToAnnotations(LEARNED_THROUGH, learnedThrough.toString()).endMetadata()
                .addToData(DATA_KEY, json);
        try {
            if (knownVersion.isPresent()) {
                try {
                    var updated = resource(builder.editMetadata().withResourceVersion(knownVersion.get()).endMetadata().build()).update();
                    return new Written.Done(updated.getMetadata().getResourceVersion());
                } catch (KubernetesClientException e) {
                    if (e.getCode() != 404) {
                        throw e;
                    }
                    // Deleted since (by an admin starting over): made again below, as at a first start.
                    builder.editMetadata().withResourceVersion(null).endMetadata();
                }
            }
            var created = resource(builder.build()).create();
            return new Written.Done(created.getMetadata().getResourceVersion());
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                return new Written.Conflict(ApiFaults.describe(e));
            }
            throw e;
        }
    }

    private Resource<ConfigMap> resource() {
        return client.configMaps().inNamespace(namespace).withName(NAME);
    }

    private Resource<ConfigMap> resource(ConfigMap map) {
        return client.configMaps().inNamespace(namespace).resource(map);
    }
}
