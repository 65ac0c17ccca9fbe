package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Whether an informer's event handler has seen every object of its first list. fabric8 fills an informer's store from
 * the list and only then hands the objects to the handlers, one by one, so {@code hasSynced()} turns true while the
 * view built by the handlers (nodes in the snapshot, GPUs of bound pods) still misses some: a verb answered then
 * would take a known node for unknown, or a held GPU for free. Once caught up, it stays so and keeps nothing.
 */
final class HandledKeys {

    private final Set<String> handled = ConcurrentHashMap.newKeySet();
    private volatile boolean caughtUp;

    /** Called by the handler for every object it is given (added, updated or deleted). */
    void handled(HasMetadata object) {
        if (!caughtUp) {
            handled.add(Cache.metaNamespaceKeyFunc(object));
        }
    }

    /** Whether every key now in the informer's store has reached the handler. */
    boolean caughtUpWith(Collection<String> storeKeys) {
        if (caughtUp) {
            return true;
        }
        if (handled.containsAll(storeKeys)) {
            caughtUp = true;
            handled.clear();
        }
        return caughtUp;
    }
}
