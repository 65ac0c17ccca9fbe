package io.hetgpu.testcluster.scheduler;

/** An extender call failed as kube-scheduler counts failure: no answer in time, a status other than 200, or a non-empty Error. */
public final class ExtenderCallException extends Exception {

    public ExtenderCallException(String message) {
        super(message);
    }
}
