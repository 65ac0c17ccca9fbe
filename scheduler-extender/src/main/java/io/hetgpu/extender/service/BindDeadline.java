package io.hetgpu.extender.service;

import io.hetgpu.extender.cluster.PodBinder;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The time one bind has for its API calls: kube-scheduler's {@code httpTimeout} less a margin for the answer, on the
 * monotonic clock. A call runs on {@code calls} and is waited for only while time is left; a write does not start once
 * the time is spent, nor when less is left than the slowest call of this bind took, because it would then likely take
 * effect after kube-scheduler was told the bind failed. One thread runs a bind's calls one after the other.
 */
final class BindDeadline {

    /** One blocking call on the API server. */
    @FunctionalInterface
    interface ApiCall<T> {
        T run() throws PodBinder.Refusal;
    }

    /** One blocking write on the API server. */
    @FunctionalInterface
    interface ApiWrite {
        void run() throws PodBinder.Refusal;
    }

    /** An API call the bind stopped waiting for, or did not start, because its time was spent. */
    static final class OutOfTime extends Exception {
        /** A call that was never started: nothing of it can land later. */
        private static final CompletableFuture<Void> NOT_STARTED = CompletableFuture.completedFuture(null);

        private final transient CompletableFuture<?> call;

        private OutOfTime(String what, CompletableFuture<?> call) {
            super(what, null, false, false);
            this.call = call;
        }

        /** Whether the call was sent, so that it may still take effect. */
        boolean started() {
            return call != NOT_STARTED;
        }

        /** Completes once the call left behind has ended, however it ended (at once for one never started). */
        CompletableFuture<Void> callEnded() {
            return call.handle((ignored, failure) -> null);
        }
    }

    private final long endNanos;
    private final Executor calls;
    /** The longest call of this bind yet. */
    private long slowestNanos;

    private BindDeadline(long endNanos, Executor calls) {
        this.endNanos = endNanos;
        this.calls = calls;
    }

    static BindDeadline after(Duration budget, Executor calls) {
        return new BindDeadline(System.nanoTime() + budget.toNanos(), calls);
    }

    long remainingNanos() {
        return endNanos - System.nanoTime();
    }

    /** Runs a read within what is left of the time. */
    <T> T call(String what, ApiCall<T> call) throws PodBinder.Refusal, OutOfTime {
        long remaining = remainingNanos();
        if (remaining <= 0) {
            throw new OutOfTime(what + ": not started, the bind's time was spent", OutOfTime.NOT_STARTED);
        }
        long started = System.nanoTime();
        var future = new CompletableFuture<T>();
        calls.execute(() -> {
            try {
                future.complete(call.run());
            } catch (PodBinder.Refusal | RuntimeException e) {
                future.completeExceptionally(e);
            }
        });
        try {
            var answer = future.get(remaining, TimeUnit.NANOSECONDS);
            slowestNanos = Math.max(slowestNanos, System.nanoTime() - started);
            return answer;
        } catch (TimeoutException e) {
            throw new OutOfTime(what + ": no answer from the API server in time", future);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PodBinder.Refusal(0, what + ": interrupted");
        } catch (ExecutionException e) {
            switch (e.getCause()) {
                case PodBinder.Refusal refusal -> throw refusal;
                case RuntimeException runtime -> throw runtime;
                default -> throw new IllegalStateException(e.getCause());
            }
        }
    }

    /** Runs a write within what is left of the time, if at least as much is left as the slowest call of this bind took. */
    void write(String what, ApiWrite write) throws PodBinder.Refusal, OutOfTime {
        long left = remainingNanos();
        if (left < slowestNanos) {
            throw new OutOfTime(what + ": not started, " + Duration.ofNanos(left).toMillis() + " ms left and the API server took "
                    + Duration.ofNanos(slowestNanos).toMillis() + " ms to answer", OutOfTime.NOT_STARTED);
        }
        call(what, () -> {
            write.run();
            return null;
        });
    }
}
