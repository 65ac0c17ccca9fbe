package io.hetgpu.extender.http;

/** A request body that is not the JSON kube-scheduler sends; the message says where. */
public final class WireFormatException extends Exception {

    public WireFormatException(String message) {
        super(message);
    }
}
