package io.hetgpu.testcluster.api;

import io.fabric8.mockwebserver.http.ByteString;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

/**
 * A watch's stream as fabric8's mock serves it, with the events written from a thread of the stream's own.
 *
 * <p>The mock's listener sends each event from a sender thread of its own, and its socket's send waits (up to 30 s)
 * for the server's event loop to write the event. Told that the watch closed, the listener waits on that event loop
 * (up to a minute) for its sender to finish. When a watch closed while its events were being sent, as an informer's
 * does when its component stops, the two waited on each other, and every connection on that loop (kubelets, informers,
 * kube-scheduler's writes) stalled for 30 s. Here the listener's socket only queues what it is given, in order, for a
 * writer thread to send: its sender never waits on the event loop, so its end does not either, and it goes on
 * happening on the event loop, where the mock expects it (ended there, the listener stops taking events at once).
 */
final class WatchStream extends WebSocketListener {

    private final WebSocketListener mock;
    private QueuedSocket socket;

    private WatchStream(WebSocketListener mock) {
        this.mock = mock;
    }

    /** {@code answer} with its watch stream, if it has one, written from a thread of its own. */
    static MockResponse writtenApart(MockResponse answer) {
        var listener = answer.getWebSocketListener();
        return listener == null ? answer : answer.withWebSocketUpgrade(new WatchStream(listener));
    }

    /** The stream's socket as the mock's listener sees it (one per stream; asked only on the stream's few events). */
    private synchronized WebSocket queued(WebSocket webSocket) {
        if (socket == null || socket.socket != webSocket) {
            socket = new QueuedSocket(webSocket);
        }
        return socket;
    }

    @Override
    public void onBeforeAccept(WebSocket webSocket, Response response) {
        mock.onBeforeAccept(queued(webSocket), response);
    }

    @Override
    public void onOpen(WebSocket webSocket, Response response) {
        mock.onOpen(queued(webSocket), response);
    }

    @Override
    public void onMessage(WebSocket webSocket, String text) {
        mock.onMessage(queued(webSocket), text);
    }

    @Override
    public void onMessage(WebSocket webSocket, ByteString bytes) {
        mock.onMessage(queued(webSocket), bytes);
    }

    @Override
    public void onMessage(WebSocket webSocket, byte[] bytes) {
        mock.onMessage(queued(webSocket), bytes);
    }

    @Override
    public void onClosing(WebSocket webSocket, int code, String reason) {
        mock.onClosing(queued(webSocket), code, reason);
    }

    @Override
    public void onClosed(WebSocket webSocket, int code, String reason) {
        mock.onClosed(queued(webSocket), code, reason);
    }

    @Override
    public void onFailure(WebSocket webSocket, Throwable failure, Response response) {
        mock.onFailure(queued(webSocket), failure, response);
    }

    /** Sends and the close, queued in the order given for one writer thread; the close is the last thing it does. */
    private static final class QueuedSocket implements WebSocket {
        private final WebSocket socket;
        private final ExecutorService writer = Executors.newSingleThreadExecutor(Thread.ofVirtual().name("watch-writer").factory());

        QueuedSocket(WebSocket socket) {
            this.socket = socket;
        }

        @Override
        public RecordedRequest request() {
            return socket.request();
        }

        @Override
        public boolean send(String text) {
            return queue(() -> socket.send(text));
        }

        @Override
        public boolean send(byte[] bytes) {
            return queue(() -> socket.send(bytes));
        }

        @Override
        public boolean close(int code, String reason) {
            boolean queued = queue(() -> socket.close(code, reason));
            writer.shutdown();
            return queued;
        }

        /** False once the stream is closed: what comes after its close is not sent, as on a closed socket. */
        private boolean queue(Runnable write) {
            try {
                writer.execute(() -> {
                    try {
                        write.run();
                    } catch (RuntimeException stopped) {
                        // The server stopped under a queued write (its event loops are gone): there is no one to write to.
                        System.getLogger(WatchStream.class.getName()).log(System.Logger.Level.DEBUG, "watch write dropped", stopped);
                    }
                });
                return true;
            } catch (RejectedExecutionException closed) {
                return false;
            }
        }
    }
}
