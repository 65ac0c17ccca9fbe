package io.hetgpu.extender.http;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.RoutingContext;
import java.util.Arrays;

/**
 * Reads a verb's request body into one array, sized by its Content-Length, before the verb's handler: the bytes the
 * verbs read, with no copy. Vert.x's body handler grows its buffer by doubling from 64 KiB and the bytes were then
 * copied out of it: three times the body allocated, which for a 28 MB {@code Nodes} filter at 5,000 nodes was what
 * filled the heap between collections. The Content-Length is the caller's word, but the bytes in flight were taken
 * from it before the body is read (a larger claim is refused with 429 first), so the array it sizes is within that
 * budget. A body past the limit is refused with 413, as soon as its Content-Length or its bytes say so. Whatever the
 * Content-Type says, the body is read as JSON: kube-scheduler speaks nothing else, and no form is decoded.
 */
final class RequestBody implements Handler<RoutingContext> {

    /** The routing context's key for the body once read. */
    private static final String KEY = "hetgpu.body";
    /** Where a body without a Content-Length (chunked) starts. */
    private static final int UNSIZED_START = 64 * 1024;
    /** The largest array the JVM makes. */
    private static final long MAX_ARRAY = Integer.MAX_VALUE - 8;

    private final long limit;

    RequestBody(long limitBytes) {
        this.limit = Math.min(limitBytes, MAX_ARRAY);
    }

    /** The request's body as read; empty before it was (a verb's handler always runs after). */
    static byte[] of(RoutingContext ctx) {
        byte[] body = ctx.get(KEY);
        return body == null ? new byte[0] : body;
    }

    @Override
    public void handle(RoutingContext ctx) {
        var request = ctx.request();
        long declared = ExtenderServer.contentLength(request);
        if (declared > limit) {
            ctx.fail(413);
            return;
        }
        if (request.isEnded()) {
            ctx.put(KEY, new byte[0]);
            ctx.next();
            return;
        }
        if (request.version() == HttpVersion.HTTP_1_1 && "100-continue".equalsIgnoreCase(request.getHeader(HttpHeaders.EXPECT))) {
            request.response().writeContinue();
        }
        var body = new Filling(declared >= 0 ? (int) declared : UNSIZED_START);
        request.exceptionHandler(ctx::fail).handler(chunk -> {
            if (!body.refused && !body.append(chunk, limit)) {
                body.refused = true;
                ctx.fail(413);
            } else if (body.size < declared) {
                // The rest is on its way: where a poll caught this body's start, read each piece as it lands rather
                // than sleep and be woken for each.
                PollingEventLoops.expectMoreIfPolled();
            }
        }).endHandler(ended -> {
            if (!body.refused) {
                ctx.put(KEY, body.bytes());
                ctx.next();
            }
        }).resume();
    }

    /** The bytes received so far, in an array that grows only when the Content-Length was absent or wrong. */
    private static final class Filling {
        private byte[] bytes;
        private int size;
        private boolean refused;

        Filling(int expected) {
            bytes = new byte[expected];
        }

        /** Appends the chunk; false when the body would pass {@code limit}. */
        boolean append(Buffer chunk, long limit) {
            int length = chunk.length();
            if (size + (long) length > limit) {
                return false;
            }
            if (size + length > bytes.length) {
                bytes = Arrays.copyOf(bytes, (int) Math.min(limit, Math.max(size + (long) length, bytes.length * 2L)));
            }
            chunk.getBytes(0, length, bytes, size);
            size += length;
            return true;
        }

        byte[] bytes() {
            return size == bytes.length ? bytes : Arrays.copyOf(bytes, size);
        }
    }
}
