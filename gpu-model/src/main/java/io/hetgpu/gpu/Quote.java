package io.hetgpu.gpu;

import java.nio.charset.StandardCharsets;

/**
 * A value a pod, a node or a caller supplied, quoted in a reason, an Event or a log line: cut to
 * {@value #MAX_CHARS} characters, with how long it was, so that a 250 KB annotation costs its message
 * 64 characters rather than 250 KB (and an answer that repeats the message, thousands of times that).
 * Every message that quotes such a value goes through here.
 */
public final class Quote {

    /** Enough to recognise a value (a card model list, a time, a device ID); not enough to carry one. */
    public static final int MAX_CHARS = 64;

    private Quote() {
    }

    /** {@code "value"}, or {@code "first 64 characters…"(250000 bytes)} for a longer one; {@code null} as null. */
    public static String of(Object value) {
        if (value == null) {
            return "null";
        }
        var text = value.toString();
        return text.length() <= MAX_CHARS ? "\"" + printable(text) + "\"" : "\"" + head(text, MAX_CHARS) + "…\"" + length(text);
    }

    /** The value unquoted (a name in a log line, an exception's text), cut the same way. */
    public static String cut(Object value) {
        return cut(value, MAX_CHARS);
    }

    /**
     * The text cut to {@code max} characters the same way: for a whole message made of several values (a node's
     * reason in a filter answer), whose own bound is larger than one value's.
     */
    public static String cut(Object value, int max) {
        if (value == null) {
            return "null";
        }
        var text = value.toString();
        return text.length() <= max ? printable(text) : head(text, max) + "…" + length(text);
    }

    /** The first characters, never half a surrogate pair. */
    private static String head(String text, int max) {
        int end = Character.isHighSurrogate(text.charAt(max - 1)) ? max - 1 : max;
        return printable(text.substring(0, end));
    }

    /**
     * Control characters shown as '?': a value's line break must not start a forged line in a log, and a character
     * JSON escapes in six bytes must not make a cut reason six times longer on the wire.
     */
    private static String printable(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (Character.isISOControl(text.charAt(i))) {
                var chars = text.toCharArray();
                for (int j = i; j < chars.length; j++) {
                    if (Character.isISOControl(chars[j])) {
                        chars[j] = '?';
                    }
                }
                return new String(chars);
            }
        }
        return text;
    }

    private static String length(String text) {
        return "(" + text.getBytes(StandardCharsets.UTF_8).length + " bytes)";
    }
}
