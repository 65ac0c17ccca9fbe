package io.hetgpu.deviceplugin.kubelet;

import java.nio.file.FileSystemException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Locale;

/**
 * A failure told in one line, its causes included. Exceptions that wrap the real reason say little on
 * their own: gRPC's "Failed to bind to address …" hides netty's "bind(..) failed: Read-only file
 * system", and the JDK's {@code AccessDeniedException} or {@code DirectoryNotEmptyException} carry
 * only the path, the reason being the exception's type.
 */
public final class FailureCause {

    private FailureCause() {
    }

    /** Each distinct message along the cause chain, outermost first, joined by ": ". */
    public static String of(Throwable failure) {
        var parts = new ArrayList<String>();
        var seen = new IdentityHashMap<Throwable, Boolean>();
        for (var t = failure; t != null && seen.put(t, Boolean.TRUE) == null; t = t.getCause()) {
            var part = describe(t);
            if (parts.stream().noneMatch(p -> p.contains(part))) {
                parts.add(part);
            }
        }
        return String.join(": ", parts);
    }

    private static String describe(Throwable t) {
        if (t instanceof FileSystemException fs && fs.getReason() == null) {
            // The JDK's translated errno (EACCES, ENOTEMPTY, ENOENT, …) is in the type, not the message.
            return (fs.getMessage() == null ? "" : fs.getMessage() + " ") + "(" + words(t) + ")";
        }
        var message = t.getMessage();
        return message == null || message.isBlank() ? words(t) : message;
    }

    /** {@code DirectoryNotEmptyException} → "directory not empty". */
    private static String words(Throwable t) {
        var name = t.getClass().getSimpleName().replaceFirst("(Exception|Error)$", "");
        return name.replaceAll("([a-z0-9])([A-Z])", "$1 $2").toLowerCase(Locale.ROOT);
    }
}
