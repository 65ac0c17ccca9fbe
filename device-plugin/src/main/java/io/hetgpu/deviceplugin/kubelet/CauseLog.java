package io.hetgpu.deviceplugin.kubelet;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * Passes a failure cause on to a log the first time it is seen, and not again until a different cause
 * (or a success, {@link #clear}) comes between. A plugin retrying every few seconds for hours then
 * writes one line per thing that went wrong, not one per retry. Not thread-safe: one thread reports.
 */
public final class CauseLog {

    private final Consumer<String> log;
    private String last;

    public CauseLog(Consumer<String> log) {
        this.log = Objects.requireNonNull(log, "log");
    }

    /** Logs {@code cause} unless it is the one logged last; returns whether it logged. */
    public boolean report(String cause) {
        Objects.requireNonNull(cause, "cause");
        if (cause.equals(last)) {
            return false;
        }
        last = cause;
        log.accept(cause);
        return true;
    }

    /** The failure is over: the next cause is logged even if it is the same as the last one. */
    public void clear() {
        last = null;
    }
}
