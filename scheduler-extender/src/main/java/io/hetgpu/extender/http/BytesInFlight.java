package io.hetgpu.extender.http;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The request bytes the server holds at once. Taken before a body is read, given back when its answer is sent
 * or its connection drops: a request that does not fit is refused at once rather than queued, because queued
 * bodies are what ran the heap out.
 */
final class BytesInFlight {

    private final long limit;
    private final AtomicLong taken = new AtomicLong();

    BytesInFlight(long limit) {
        this.limit = limit;
    }

    /** True when {@code bytes} fit beside those already taken, and are now taken. */
    boolean tryTake(long bytes) {
        long now;
        do {
            now = taken.get();
            if (now + bytes > limit) {
                return false;
            }
        } while (!taken.compareAndSet(now, now + bytes));
        return true;
    }

    void give(long bytes) {
        taken.addAndGet(-bytes);
    }

    long taken() {
        return taken.get();
    }

    long limit() {
        return limit;
    }
}
