package io.hetgpu.extender.model;

/** A pod's GPU request or one of its hetgpu annotations cannot be read; the message names the field and quotes the value. */
public final class InvalidPodRequestException extends Exception {

    public InvalidPodRequestException(String message) {
        super(message);
    }
}
