package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;

/**
 * The API server calls of the bind handshake: read the pod, record its devices in an annotation, create its Binding.
 * An interface so that the bind verb is judged without HTTP, and a race can be staged between its steps in tests.
 */
public interface PodBinder {

    /**
     * A call the API server refused or could not answer.
     *
     * @param code the HTTP status (404 pod gone, 409 conflict), 0 when there was no answer
     */
    final class Refusal extends Exception {
        private final int code;

        public Refusal(int code, String message) {
            super(message);
            this.code = code;
        }

        public int code() {
            return code;
        }
    }

    /** The pod as the API server has it now, or null when it has none by that name. */
    Pod pod(String namespace, String name) throws Refusal;

    /**
     * Sets the annotation, on the pod version read ({@code resourceVersion}, so that a pod changed since, bound by
     * someone else for one, is a 409 and not overwritten).
     */
    void annotate(String namespace, String name, String resourceVersion, String key, String value) throws Refusal;

    /** Removes the annotation if it still has {@code value} (a later bind's record is left alone). */
    void removeAnnotation(String namespace, String name, String key, String value) throws Refusal;

    /** Creates the pod's Binding to {@code node} through the {@code pods/binding} subresource, for this UID only. */
    void bind(String namespace, String name, String uid, String node) throws Refusal;

    /** Why an extender without an API server cannot bind. */
    String NO_API_SERVER = "this extender runs without an API server (--kubeconfig none) and cannot bind: "
            + "leave bindVerb out of kube-scheduler's extender configuration";

    /** The binder of an extender without an API server: refuses every call, saying why. */
    PodBinder NONE = new PodBinder() {
        private static final String WHY = NO_API_SERVER;

        @Override
        public Pod pod(String namespace, String name) throws Refusal {
            throw new Refusal(0, WHY);
        }

        @Override
        public void annotate(String namespace, String name, String resourceVersion, String key, String value) throws Refusal {
            throw new Refusal(0, WHY);
        }

        @Override
        public void removeAnnotation(String namespace, String name, String key, String value) throws Refusal {
            throw new Refusal(0, WHY);
        }

        @Override
        public void bind(String namespace, String name, String uid, String node) throws Refusal {
            throw new Refusal(0, WHY);
        }
    };
}
