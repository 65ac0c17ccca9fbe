package io.hetgpu.nvml;

import io.hetgpu.gpu.discovery.HealthChange;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The thread that feeds NVML's events and probe results into a {@link DeviceHealthTracker} and hands the
 * resulting changes on. All decisions live in the tracker; this only waits, probes and forwards.
 */
final class NvmlHealthWatcher implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(NvmlHealthWatcher.class.getName());
    /** The longest one NVML wait blocks, so that closing the source stops the thread promptly. */
    private static final Duration MAX_WAIT = Duration.ofMillis(500);

    private final NvmlDriver driver;
    private final Map<String, Integer> indexByUuid;
    private final DeviceHealthTracker tracker;
    private final Duration probeInterval;
    private final Duration waitSlice;
    private final Clock clock;
    private final Consumer<List<HealthChange>> changes;
    /** Null when sticky marks live in memory only. */
    private final StickyMarkFile markFile;
    private List<StickyMark> savedMarks;
    private final CountDownLatch stop = new CountDownLatch(1);
    private final Thread thread;

    /**
     * @param bootId this boot of the node, empty when it cannot be read: then sticky marks are not kept across
     *               restarts, since a reboot could not be told from a restart
     */
    NvmlHealthWatcher(NvmlDriver driver, Map<String, Integer> indexByUuid, NvmlOptions options, Clock clock,
                      Optional<String> bootId, Consumer<List<HealthChange>> changes) {
        this.driver = driver;
        this.indexByUuid = Map.copyOf(indexByUuid);
        List<StickyMark> saved = List.of();
        if (options.stickyMarkFile().isPresent() && bootId.isEmpty()) {
            LOG.log(System.Logger.Level.WARNING, "no boot ID: GPUs held until a reset or reboot are not remembered "
                    + "across restarts of this process");
        }
        this.markFile = bootId.isPresent() ? options.stickyMarkFile().map(StickyMarkFile::new).orElse(null) : null;
        if (markFile != null) {
            saved = markFile.load();
        }
        this.savedMarks = saved;
        this.tracker = new DeviceHealthTracker(List.copyOf(indexByUuid.keySet()), options, bootId.orElse("unknown"), saved);
        this.probeInterval = options.probeInterval();
        this.waitSlice = options.probeInterval().compareTo(MAX_WAIT) < 0 ? options.probeInterval() : MAX_WAIT;
        this.clock = clock;
        this.changes = changes;
        this.thread = Thread.ofPlatform().daemon().name("hetgpu-nvml-health").unstarted(this::run);
    }

    /**
     * The health that marks saved by an earlier run give the devices, logged; a reboot's cleared marks leave the
     * file at once. Call before {@link #start}.
     */
    List<HealthChange> restore() {
        var restored = tracker.restoredChanges();
        for (var change : restored) {
            LOG.log(System.Logger.Level.INFO, "GPU {0} is {1}: {2}", change.uuid(), change.health().label(), change.reason());
        }
        persist();
        return restored;
    }

    void start() {
        thread.start();
    }

    /** Stops the thread and waits for it to leave NVML (at most one wait slice). */
    @Override
    public void close() {
        stop.countDown();
        try {
            thread.join(waitSlice.multipliedBy(4).toMillis() + 1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        NvmlDriver.HealthEvents events = openEvents();
        Instant nextProbe = clock.instant().plus(probeInterval);
        try {
            while (stop.getCount() > 0) {
                if (events != null) {
                    try {
                        var event = events.await(waitSlice);
                        if (event.isPresent()) {
                            publish(tracker.onEvent(event.get(), signalsOf(event.get()), clock.instant()));
                        }
                    } catch (RuntimeException e) {
                        publish(tracker.onNvmlFailure(e.getMessage(), clock.instant()));
                        events = closeQuietly(events);
                    }
                } else if (stop.await(waitSlice.toMillis(), TimeUnit.MILLISECONDS)) {
                    break;
                }
                var now = clock.instant();
                if (!now.isBefore(nextProbe)) {
                    probeUnhealthy(now);
                    if (events == null) {
                        events = openEvents();
                    }
                    nextProbe = now.plus(probeInterval);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeQuietly(events);
        }
    }

    private void probeUnhealthy(Instant now) {
        for (var uuid : tracker.unhealthyDevices()) {
            int index = indexByUuid.get(uuid);
            boolean answered;
            try {
                answered = driver.answersNormally(index);
            } catch (RuntimeException e) {
                answered = false;
            }
            publish(tracker.onProbe(uuid, answered, signals(index), now));
        }
    }

    private NvmlDriver.ResetSignals signalsOf(NvmlDriver.HealthEvent event) {
        var uuid = switch (event) {
            case NvmlDriver.HealthEvent.CriticalXid xid -> xid.uuid();
            case NvmlDriver.HealthEvent.DoubleBitEcc ecc -> ecc.uuid();
            case NvmlDriver.HealthEvent.UnidentifiedDevice unnamed -> null;
        };
        var index = uuid == null ? null : indexByUuid.get(uuid);
        return index == null ? NvmlDriver.ResetSignals.UNKNOWN : signals(index);
    }

    /** No reading is no evidence: a failing read keeps a sticky mark where it is. */
    private NvmlDriver.ResetSignals signals(int index) {
        try {
            return driver.resetSignals(index);
        } catch (RuntimeException e) {
            return NvmlDriver.ResetSignals.UNKNOWN;
        }
    }

    /** Writes the sticky marks whenever they differ from the file's: a mark, a clearing, a higher ECC count. */
    private void persist() {
        var marks = tracker.stickyMarks();
        if (markFile != null && !marks.equals(savedMarks)) {
            markFile.save(marks);
            savedMarks = marks;
        }
    }

    private NvmlDriver.HealthEvents openEvents() {
        try {
            return driver.healthEvents();
        } catch (RuntimeException e) {
            publish(tracker.onNvmlFailure("cannot watch NVML events: " + e.getMessage(), clock.instant()));
            return null;
        }
    }

    private void publish(List<HealthChange> list) {
        persist();
        if (list.isEmpty()) {
            return;
        }
        for (var change : list) {
            LOG.log(System.Logger.Level.INFO, "GPU {0} is now {1}: {2}", change.uuid(), change.health().label(), change.reason());
        }
        try {
            changes.accept(list);
        } catch (RuntimeException e) {
            // A faulty listener must not stop health watching for everyone else.
            LOG.log(System.Logger.Level.WARNING, "health listener failed", e);
        }
    }

    private static NvmlDriver.HealthEvents closeQuietly(NvmlDriver.HealthEvents events) {
        if (events != null) {
            try {
                events.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "closing the NVML event set failed", e);
            }
        }
        return null;
    }
}
