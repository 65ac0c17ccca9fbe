package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

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

    /**
     * An informer's handler that passes each event on as {@code (before, after)} (null before an add, null after a
     * delete), then marks the object handled: the one shape every handler of the view's first lists takes. Marked even
     * when the change failed (fabric8 logs the failure): one object the view could not take must not keep the
     * extender from ever syncing.
     */
    <T extends HasMetadata> ResourceEventHandler<T> handling(BiConsumer<T, T> change) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T object) {
                try {
                    change.accept(null, object);
                } finally {
                    handled(object);
                }
            }

            @Override
            public void onUpdate(T before, T after) {
                try {
                    change.accept(before, after);
                } finally {
                    handled(after);
                }
            }

            @Override
            public void onDelete(T object, boolean finalStateUnknown) {
                try {
                    change.accept(object, null);
                } finally {
                    handled(object);
                }
            }
        };
    }
}
