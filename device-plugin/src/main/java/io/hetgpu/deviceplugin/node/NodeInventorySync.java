package io.hetgpu.deviceplugin.node;

import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.deviceplugin.status.PluginMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Keeps the Node's hetgpu labels and annotations current: on start, on every health change, every
 * {@code pollInterval} (to follow pods that come and go) and shortly after each Allocate. One thread;
 * the Node is read once and then followed through the patch answers, so a quiet node costs one
 * PodResources call per poll and no API-server traffic. Failures are logged once per change of state and
 * retried on the next round; the plugin keeps serving kubelet whatever the API server does.
 */
public final class NodeInventorySync implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(NodeInventorySync.class);

    /** kubelet records an allocation only after Allocate returns, so PodResources is read a little later. */
    static final Duration AFTER_ALLOCATE = Duration.ofMillis(500);

    private final GpuInventory inventory;
    private final NodeInventory plan;
    private final NodeInventoryPublisher publisher;
    private final Supplier<Set<String>> heldDevices;
    private final Clock clock;
    private final Duration pollInterval;
    private final PluginMetrics metrics;
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
        var thread = new Thread(runnable, "node-inventory-sync");
        thread.setDaemon(true);
        return thread;
    });

    // Confined to the executor thread.
    private NodeMetadata known;
    private String apiProblem = "not started";
    private String podResourcesProblem = "not started";
    private GpuInventory.Watch watch;
    /** Set by {@link #close}: a round it cuts short (interrupted mid-call) is the stop, not a problem to warn of. */
    private volatile boolean closing;

    /**
     * @param heldDevices device IDs of our resource held by pods; throws when kubelet cannot be asked
     */
    public NodeInventorySync(GpuInventory inventory, NodeInventory plan, NodeInventoryPublisher publisher,
                             Supplier<Set<String>> heldDevices, Clock clock, Duration pollInterval, PluginMetrics metrics) {
        this.inventory = inventory;
        this.plan = plan;
        this.publisher = publisher;
        this.heldDevices = heldDevices;
        this.clock = clock;
        this.pollInterval = pollInterval;
        this.metrics = metrics;
    }

    /**
     * What the plugin logs once it has published the inventory on {@code nodeName}, the Node's answer handled; the image
     * build's training run waits for it.
     */
    public static String publishing(String nodeName) {
        return "Publishing the GPU inventory on node " + nodeName;
    }

    public void start() {
        executor.scheduleWithFixedDelay(this::sync, 0, pollInterval.toMillis(), TimeUnit.MILLISECONDS);
        watch = inventory.watch(topology -> submit(0));
    }

    /** Devices were just allocated: publish the new free set as soon as kubelet reports it. */
    public void allocated() {
        submit(AFTER_ALLOCATE.toMillis());
    }

    /** Runs one round now, after any in progress; the future completes when it has. */
    public Future<?> refreshNow() {
        return executor.submit(this::sync);
    }

    private void submit(long delayMillis) {
        try {
            executor.schedule(this::sync, delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private void sync() {
        var held = readHeldDevices();
        try {
            if (known == null) {
                known = publisher.read();
            }
            var desired = plan.desired(inventory.topology(), held, clock.instant(), known);
            var patch = NodePatch.between(known, desired, NodeLabels.OWNED);
            if (!patch.isEmpty()) {
                known = publisher.apply(patch);
                metrics.nodePatched();
                log.debug("Patched node {}: labels {} annotations {}", publisher.nodeName(), patch.labels().keySet(), patch.annotations().keySet());
            }
            apiProblem = report(apiProblem, "", publishing(publisher.nodeName()));
        } catch (RuntimeException e) {
            known = null; // read the Node again next time: it may have changed or be back
            apiProblem = report(apiProblem, String.valueOf(e.getMessage()), "Cannot publish the GPU inventory on node " + publisher.nodeName());
        }
    }

    private Optional<Set<String>> readHeldDevices() {
        try {
            var held = heldDevices.get();
            podResourcesProblem = report(podResourcesProblem, "", "Reading free devices from kubelet's PodResources API");
            return Optional.of(held);
        } catch (RuntimeException e) {
            podResourcesProblem = report(podResourcesProblem, String.valueOf(e.getMessage()),
                    "Cannot read kubelet's PodResources API; the free-device annotation is left as it is");
            return Optional.empty();
        }
    }

    /**
     * Logs when a problem appears, changes or goes away; returns the problem now current ("" for none). A failure while
     * closing is the close cutting a call short: logged at debug, and the problem stays as it was.
     */
    private String report(String previous, String now, String message) {
        if (closing && !now.isEmpty()) {
            log.debug("Stopped: {}: {}", message, now);
            return previous;
        }
        if (!previous.equals(now)) {
            if (now.isEmpty()) {
                log.info("{}", message);
            } else {
                log.warn("{}: {}", message, now);
            }
        }
        return now;
    }

    @Override
    public void close() {
        closing = true;
        if (watch != null) {
            watch.close();
        }
        executor.shutdownNow();
        try {
            executor.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
