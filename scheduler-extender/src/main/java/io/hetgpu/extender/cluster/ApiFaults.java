package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** What went wrong talking to the API server, as one line: a log line says the cause, its stack trace is for debug level. */
public final class ApiFaults {

    private ApiFaults() {
    }

    /**
     * The messages of a failure and its causes, joined, each said once: fabric8's "An error has occurred." alone does not
     * say that the connection was refused, its cause does.
     */
    public static String describe(Throwable failure) {
        var parts = new ArrayList<String>();
        for (Throwable t = failure; t != null && parts.size() < 8; t = t.getCause() == t ? null : t.getCause()) {
            if ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
                continue;
            }
            var message = t instanceof KubernetesClientException api && api.getCode() > 0 ? answer(api) : (t.getMessage() == null || t.getMessage().isBlank() ? t.getClass().getSimpleName() : t.getMessage())
                    .strip().replaceAll("\\s+", " ");
            if (parts.stream().noneMatch(known -> known.contains(message))) {
                parts.add(message);
            }
        }
        return String.join(": ", parts);
    }

    /**
     * An answer of the API server as "HTTP 403 Forbidden: nodes is forbidden: ...": fabric8's own message adds the URL
     * and the whole Status object, several hundred characters a line.
     */
    private static String answer(KubernetesClientException e) {
        var status = e.getStatus();
        var reason = status == null || status.getReason() == null ? "" : " " + status.getReason();
        var message = status == null || status.getMessage() == null ? "" : ": " + status.getMessage();
        return "HTTP " + e.getCode() + reason + message;
    }
}
