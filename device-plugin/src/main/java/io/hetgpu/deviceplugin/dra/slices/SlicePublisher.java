package io.hetgpu.deviceplugin.dra.slices;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.deviceplugin.dra.slices.HetgpuSlice.Unhealthy;
import io.hetgpu.deviceplugin.kubelet.Backoff;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the node's one ResourceSlice of hetgpu's DRA driver as the GPUs are: written at start (the slice a previous run
 * left adopted and updated, any extra one deleted), again on every health change, and checked every
 * {@code resync} for a slice someone else deleted or changed (kubelet deletes a node's slices when it starts). One
 * thread; a failed write is retried with capped backoff and jitter, so the agent keeps serving kubelet whatever the API
 * server does. Whether the API server keeps device taints is learned from its answer: a server without the
 * DRADeviceTaints gate drops them silently, and then an unhealthy GPU is left out of the slice instead.
 */
public final class SlicePublisher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SlicePublisher.class);

    /** API-server writes: 200 ms, 400 ms, … up to 30 s, each 0–50 % shorter at random. */
    static final Backoff API_BACKOFF = new Backoff(Duration.ofMillis(200), Duration.ofSeconds(30), 0.5);
    /** How often the slice is read back to find it deleted or changed by someone else. */
    static final Duration RESYNC = Duration.ofSeconds(30);

    private final SliceWriter writer;
    private final GpuInventory inventory;
    private final CardCatalog catalog;
    private final Map<Integer, String> pcieRoots;
    private final Backoff backoff;
    private final Duration resync;
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
        var thread = new Thread(runnable, "dra-slice-publisher");
        thread.setDaemon(true);
        return thread;
    });

    // Confined to the executor thread.
    private SliceWriter.Written written;
    private Unhealthy unhealthy = Unhealthy.TAINTED;
    private int failures;
    private ScheduledFuture<?> retry;
    private String problem = "not started";
    private boolean checkDue;

    private volatile boolean published;
    private volatile boolean closing;

    public SlicePublisher(KubernetesClient client, String driverName, String nodeName, GpuInventory inventory,
                          CardCatalog catalog, Map<Integer, String> pcieRoots) {
        this(new SliceWriter(client, driverName, nodeName), inventory, catalog, pcieRoots, API_BACKOFF, RESYNC);
    }

    SlicePublisher(SliceWriter writer, GpuInventory inventory, CardCatalog catalog, Map<Integer, String> pcieRoots,
                   Backoff backoff, Duration resync) {
        this.writer = writer;
        this.inventory = Objects.requireNonNull(inventory, "inventory");
        this.catalog = Objects.requireNonNull(catalog, "catalog");
        this.pcieRoots = Map.copyOf(pcieRoots);
        this.backoff = backoff;
        this.resync = resync;
    }

    /** Publishes in the background, retried until it holds, then follows health changes and checks the slice every resync. */
    public void start() {
        submit(this::sync);
        executor.scheduleWithFixedDelay(() -> {
            checkDue = true;
            sync();
        }, resync.toMillis(), resync.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** A GPU's health changed ({@link GpuInventory#apply} returned true): the slice follows. */
    public void inventoryChanged() {
        submit(this::sync);
    }

    /** Whether the slice has been written once; the agent is ready for DRA from then on. */
    public boolean published() {
        return published;
    }

    private void submit(Runnable round) {
        try {
            executor.execute(round);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /** One round: the slice made to match the GPUs, or a retry scheduled. */
    private void sync() {
        try {
            if (checkDue && written != null) {
                written = writer.check(written).orElse(null);
            }
            checkDue = false;
            publish();
            failures = 0;
            report("");
        } catch (RuntimeException e) {
            written = null; // read what the API server has again: the slice may be gone, changed or back
            report(String.valueOf(e.getMessage()));
            scheduleRetry();
        }
    }

    private void publish() {
        // At most twice: the second write is the one without the taints an API server just dropped.
        for (int attempt = 0; attempt < 2; attempt++) {
            var devices = HetgpuSlice.devices(inventory.topology(), catalog, pcieRoots, unhealthy);
            if (written != null && written.devices().equals(devices)) {
                return;
            }
            written = writer.write(written, devices);
            published = true;
            if (unhealthy == Unhealthy.TAINTED && written.taintsDropped()) {
                log.info("The API server drops device taints (DRADeviceTaints off): unhealthy GPUs are left out of the ResourceSlice instead");
                unhealthy = Unhealthy.LEFT_OUT;
                continue;
            }
            return;
        }
    }

    private void scheduleRetry() {
        // One retry waiting at a time; the one running now (its delay spent) does not count.
        if (closing || (retry != null && !retry.isDone() && retry.getDelay(TimeUnit.NANOSECONDS) > 0)) {
            return;
        }
        var delay = backoff.delay(failures++, ThreadLocalRandom.current().nextDouble());
        try {
            retry = executor.schedule(this::sync, delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /** Logs when a problem appears, changes or goes away; a failure cut short by the close is logged at debug. */
    private void report(String now) {
        if (closing && !now.isEmpty()) {
            log.debug("Stopped while publishing the ResourceSlice: {}", now);
            return;
        }
        if (!problem.equals(now)) {
            if (now.isEmpty()) {
                log.info("Publishing the GPUs of node {} as a ResourceSlice of {}", writer.nodeName(), writer.driverName());
            } else {
                log.warn("Cannot publish the ResourceSlice of node {} (retrying): {}", writer.nodeName(), now);
            }
        }
        problem = now;
    }

    @Override
    public void close() {
        closing = true;
        executor.shutdownNow();
        try {
            executor.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
