package io.hetgpu.extender.wire;

import com.fasterxml.jackson.annotation.JsonProperty;

/** kube-scheduler's {@code ExtenderBindingResult}: empty {@code Error} when the pod is bound, else why not (it retries the pod). */
public record ExtenderBindingResult(@JsonProperty("Error") String error) {

    public static final ExtenderBindingResult BOUND = new ExtenderBindingResult("");

    public ExtenderBindingResult {
        error = error == null ? "" : error;
    }

    public boolean bound() {
        return error.isEmpty();
    }
}
