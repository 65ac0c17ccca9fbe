package io.hetgpu.testcluster.api;

import io.fabric8.mockwebserver.http.ByteString;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;

/**
 * A watch's stream as fabric8's mock serves it, with its end handled off the server's event loop.
 *
 * <p>The mock's listener, told that a watch closed or failed, waits (up to a minute) for the thread that sends the
 * watch's events to finish; that thread, mid-send, waits (up to 30 s) for the same event loop to write its event. Every
 * connection on that loop (kubelets, informers, kube-scheduler's writes) then stalls until the send gives up: an
 * informer stopped while its events flow, as a component that restarts stops them, held the test cluster's API
 * server for 30 s. Here the end runs on a thread of its own, and the event loop goes on writing.
 */
final class WatchStream extends WebSocketListener {

    private final WebSocketListener mock;

    private WatchStream(WebSocketListener mock) {
        this.mock = mock;
    }

    /** {@code answer} with its watch stream, if it has one, ended off the event loop. */
    static MockResponse endingOffTheEventLoop(MockResponse answer) {
        var listener = answer.getWebSocketListener();
        return listener == null ? answer : answer.withWebSocketUpgrade(new WatchStream(listener));
    }

    @Override
    public void onBeforeAccept(WebSocket webSocket, Response response) {
        mock.onBeforeAccept(webSocket, response);
    }

    @Override
    public void onOpen(WebSocket webSocket, Response response) {
        mock.onOpen(webSocket, response);
    }

    @Override
    public void onMessage(WebSocket webSocket, String text) {
        mock.onMessage(webSocket, text);
    }

    @Override
    public void onMessage(WebSocket webSocket, ByteString bytes) {
        mock.onMessage(webSocket, bytes);
    }

    @Override
    public void onMessage(WebSocket webSocket, byte[] bytes) {
        mock.onMessage(webSocket, bytes);
    }

    @Override
    public void onClosing(WebSocket webSocket, int code, String reason) {
        mock.onClosing(webSocket, code, reason);
    }

    @Override
    public void onClosed(WebSocket webSocket, int code, String reason) {
        Thread.ofVirtual().name("watch-closed").start(() -> mock.onClosed(webSocket, code, reason));
    }

    @Override
    public void onFailure(WebSocket webSocket, Throwable failure, Response response) {
        Thread.ofVirtual().name("watch-failed").start(() -> mock.onFailure(webSocket, failure, response));
    }
}
