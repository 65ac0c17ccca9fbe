package io.hetgpu.deviceplugin.pods;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A Warning Event {@value #REASON} on the pod whose assigned GPUs kubelet did not allocate, so that its owner
 * sees it in {@code kubectl describe pod}. Posted off kubelet's Allocate call (a slow API server must not delay
 * a container's start), from a bounded queue: a flood of mismatches costs Events, not memory.
 */
public final class MismatchEvents implements Consumer<DeviceHandshake.Allocation.Mismatch>, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MismatchEvents.class);

    public static final String REASON = "GpuAssignmentMismatch";
    static final String COMPONENT = "hetgpu-device-plugin";

    private final KubernetesClient client;
    private final String node;
    private final Clock clock;
    private final ThreadPoolExecutor executor;

    public MismatchEvents(KubernetesClient client, String node, Clock clock) {
        this.client = client;
        this.node = node;
        this.clock = clock;
        this.executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(64),
                Thread.ofPlatform().daemon().name("mismatch-events").factory(),
                (task, pool) -> log.warn("A {} Event was dropped: too many at once, or stopping (the log has every mismatch)", REASON));
    }

    @Override
    public void accept(DeviceHandshake.Allocation.Mismatch mismatch) {
        var now = clock.instant();
        executor.execute(() -> post(mismatch, now));
    }

    private void post(DeviceHandshake.Allocation.Mismatch mismatch, java.time.Instant now) {
        var pod = mismatch.pod();
        var message = "kubelet allocated GPUs " + mismatch.devices() + " instead of the ones hetgpu's scheduler extender chose, "
                + mismatch.assigned() + " (annotation hetgpu.io/gpu-devices); the container gets kubelet's";
        var event = new EventBuilder()
                .withNewMetadata().withNamespace(pod.namespace())
                .withName(pod.name() + "." + Long.toHexString(now.toEpochMilli())).endMetadata()
                .withNewInvolvedObject().withKind("Pod").withApiVersion("v1").withNamespace(pod.namespace())
                .withName(pod.name()).withUid(pod.uid()).endInvolvedObject()
                .withReason(REASON).withType("Warning").withMessage(message)
                .withNewSource().withComponent(COMPONENT).withHost(node).endSource()
                .withReportingComponent(COMPONENT).withReportingInstance(node)
                .withFirstTimestamp(now.toString()).withLastTimestamp(now.toString()).withCount(1)
                .build();
        try {
            client.v1().events().inNamespace(pod.namespace()).resource(event).create();
        } catch (KubernetesClientException e) {
            log.warn("Could not post the {} Event of pod {}: {}", REASON, pod.key(), e.getMessage());
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
