package io.hetgpu.extender.cluster;

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
            var message = (t.getMessage() == null || t.getMessage().isBlank() ? t.getClass().getSimpleName() : t.getMessage())
                    .strip().replaceAll("\\s+", " ");
            if (parts.stream().noneMatch(known -> known.contains(message))) {
                parts.add(message);
            }
        }
        return String.join(": ", parts);
    }
}
