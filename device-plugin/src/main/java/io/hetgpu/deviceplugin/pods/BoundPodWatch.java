package io.hetgpu.deviceplugin.pods;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.ReducedStateItemStore;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.tier.CardRequirements;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Feeds {@link PendingAssignments} from the API server: an informer on the pods bound to this node
 * ({@code spec.nodeName} field selector, so the API server sends nothing else). Its cache keeps, per pod, only
 * the name, namespace, uid and resourceVersion (about 200 bytes instead of the whole pod): the informer needs
 * them to tell deletions on a re-list, and everything else is read from each event as it comes. Pods are read as
 * generic resources (maps), not fabric8's Pod model, so that the pod model's classes and their Jackson deserialisers
 * are never loaded (with no pods on the node the registration benchmark measured 102 MiB with the model, 101 without:
 * within noise, but nothing is lost).
 */
public final class BoundPodWatch implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(BoundPodWatch.class);

    private static final Set<String> ADMITTED_PHASES = Set.of("Running", "Succeeded", "Failed");

    private final SharedIndexInformer<GenericKubernetesResource> informer;
    private final java.util.concurrent.CompletableFuture<Void> synced;

    private BoundPodWatch(SharedIndexInformer<GenericKubernetesResource> informer) {
        this.informer = informer;
        this.synced = informer.start().toCompletableFuture();
    }

    /** Starts watching; {@link #awaitSynced} says when the first list has been read. */
    public static BoundPodWatch start(KubernetesClient client, String node, String resourceName, CardCatalog catalog,
                                      PendingAssignments pending) {
        var informer = client.genericKubernetesResources("v1", "Pod").inAnyNamespace()
                .withField("spec.nodeName", node).runnableInformer(0);
        informer.itemStore(new ReducedStateItemStore<>(ReducedStateItemStore.NAME_KEY_STATE, GenericKubernetesResource.class,
                client.getKubernetesSerialization(), "metadata.uid"));
        var failures = new Object() {
            String last;
        };
        // Keep trying whatever fails (API server away, RBAC not yet applied): without the watch the plugin
        // still serves, choosing GPUs as for pods without an assignment.
        informer.exceptionHandler((started, failure) -> {
            var cause = String.valueOf(failure.getMessage());
            if (!cause.equals(failures.last)) {
                failures.last = cause;
                log.warn("Watching the pods bound to {} failed, retrying: {}", node, cause);
            }
            return true;
        });
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(GenericKubernetesResource pod) {
                update(pod);
            }

            @Override
            public void onUpdate(GenericKubernetesResource old, GenericKubernetesResource pod) {
                update(pod);
            }

            @Override
            public void onDelete(GenericKubernetesResource pod, boolean finalStateUnknown) {
                var uid = pod.getMetadata() == null ? null : pod.getMetadata().getUid();
                if (uid != null) {
                    pending.remove(uid);
                }
            }

            private void update(GenericKubernetesResource pod) {
                try {
                    pending.update(boundPod(pod, resourceName, catalog));
                } catch (RuntimeException e) {
                    // A pod the API server accepted but that breaks an assumption here: skip it, keep watching.
                    log.warn("Pod {}/{} skipped: {}", pod.getMetadata().getNamespace(), pod.getMetadata().getName(), e.toString());
                }
            }
        });
        return new BoundPodWatch(informer);
    }

    /** Whether the first list was read within {@code patience}. */
    public boolean awaitSynced(Duration patience) {
        try {
            synced.get(patience.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException | ExecutionException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The values of {@code pod} the handshake reads. */
    static BoundPod boundPod(GenericKubernetesResource pod, String resourceName, CardCatalog catalog) {
        var metadata = pod.getMetadata();
        Map<String, String> annotations = metadata.getAnnotations() == null ? Map.of() : metadata.getAnnotations();
        var requests = new ArrayList<Integer>();
        for (Object container : listAt(pod, "spec", "containers")) {
            int gpus = container instanceof Map<?, ?> map ? gpus(map, resourceName) : 0;
            if (gpus > 0) {
                requests.add(gpus);
            }
        }
        // kubelet writes container statuses (waiting in ContainerCreating at first) only for a pod it has admitted,
        // and it allocates every container's devices during admission: a pod with any is allocated already.
        boolean pastAdmission = metadata.getDeletionTimestamp() != null
                || ADMITTED_PHASES.contains(textAt(pod, "status", "phase"))
                || !listAt(pod, "status", "containerStatuses").isEmpty()
                || !listAt(pod, "status", "initContainerStatuses").isEmpty();
        // A requirement that cannot be read counts as none: the extender, which reads the same annotations, says why.
        var cards = CardRequirements.read(annotations, catalog, new ArrayList<>());
        return new BoundPod(metadata.getNamespace(), metadata.getName(), String.valueOf(metadata.getUid()),
                textAt(pod, "spec", "nodeName"), Optional.ofNullable(annotations.get(HetgpuKeys.POD_GPU_DEVICES)),
                requests, pastAdmission, cards);
    }

    /**
     * An extended resource's count: the limit (a request must equal it where given), 0 for none or an unreadable
     * one (kubelet refuses a fractional extended resource; the annotation's count check then says so).
     */
    private static int gpus(Map<?, ?> container, String resourceName) {
        if (!(container.get("resources") instanceof Map<?, ?> resources)) {
            return 0;
        }
        var quantity = resources.get("limits") instanceof Map<?, ?> limits ? limits.get(resourceName) : null;
        if (quantity == null && resources.get("requests") instanceof Map<?, ?> requests) {
            quantity = requests.get(resourceName);
        }
        if (quantity == null) {
            return 0;
        }
        try {
            return new Quantity(String.valueOf(quantity)).getNumericalAmount().intValueExact();
        } catch (ArithmeticException | IllegalArgumentException e) {
            return 0;
        }
    }

    private static List<?> listAt(GenericKubernetesResource pod, String... path) {
        return pod.get((Object[]) path) instanceof List<?> list ? list : List.of();
    }

    private static String textAt(GenericKubernetesResource pod, String... path) {
        return pod.get((Object[]) path) instanceof String text ? text : null;
    }

    @Override
    public void close() {
        informer.stop();
    }
}
