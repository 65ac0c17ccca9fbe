package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * An informer's store that keeps, of each object, its key, resourceVersion and member count, not the object: a Job,
 * JobSet or training job carries whole pod templates (kilobytes each), of which the count is a few bytes. The informer
 * gets back a bare object (name, namespace, resourceVersion), which is all it compares when it lists again.
 */
final class SizeTable implements ItemStore<GenericKubernetesResource> {

    private record Entry(String resourceVersion, ObjectCount count) {
    }

    private final Function<GenericKubernetesResource, ObjectCount> reader;
    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

    SizeTable(Function<GenericKubernetesResource, ObjectCount> reader) {
        this.reader = reader;
    }

    /** The count the object {@code namespace/name} gives, or null when there is no such object. */
    ObjectCount count(String namespace, String name) {
        var entry = entries.get(Cache.namespaceKeyFunc(namespace, name));
        return entry == null ? null : entry.count();
    }

    @Override
    public String getKey(GenericKubernetesResource object) {
        return Cache.metaNamespaceKeyFunc(object);
    }

    @Override
    public GenericKubernetesResource put(String key, GenericKubernetesResource object) {
        ObjectCount count;
        try {
            count = reader.apply(object);
        } catch (RuntimeException e) {
            // A shape no reader foresaw (a list where a map belongs): that object's count is unknown, the informer goes on.
            count = new ObjectCount.Unreadable("could not be read: " + ApiFaults.describe(e));
        }
        var old = entries.put(key, new Entry(object.getMetadata().getResourceVersion(), count));
        return old == null ? null : bare(key, old);
    }

    @Override
    public GenericKubernetesResource remove(String key) {
        var old = entries.remove(key);
        return old == null ? null : bare(key, old);
    }

    @Override
    public Stream<String> keySet() {
        return entries.keySet().stream();
    }

    @Override
    public Stream<GenericKubernetesResource> values() {
        return entries.entrySet().stream().map(entry -> bare(entry.getKey(), entry.getValue()));
    }

    @Override
    public int size() {
        return entries.size();
    }

    @Override
    public GenericKubernetesResource get(String key) {
        var entry = entries.get(key);
        return entry == null ? null : bare(key, entry);
    }

    /** The object as far as the informer needs it: name, namespace and resourceVersion (the key is namespace/name). */
    private static GenericKubernetesResource bare(String key, Entry entry) {
        int slash = key.indexOf('/');
        var metadata = new ObjectMeta();
        metadata.setNamespace(slash < 0 ? null : key.substring(0, slash));
        metadata.setName(key.substring(slash + 1));
        metadata.setResourceVersion(entry.resourceVersion());
        var object = new GenericKubernetesResource();
        object.setMetadata(metadata);
        return object;
    }
}
