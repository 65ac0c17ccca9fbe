package io.hetgpu.gpu;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * A value a pod, a node, a file or a caller supplied, quoted in a reason, an Event, a log line or a terminal: its
 * control characters escaped, and cut to {@value #MAX_CHARS} characters as printed, with how long it was, so that a
 * 250 KB annotation costs its message 64 characters rather than 250 KB (and an answer that repeats the message,
 * thousands of times that). Every message that quotes such a value goes through here.
 *
 * <p>Escaped, because a value is printed where a person reads it: an escape sequence ({@code ESC [2J}) in a pod's name
 * must not clear the terminal that prints it, a line break must not start a forged line in a log, and a bidirectional
 * override must not make the text read other than it is. What is escaped: C0 controls, DEL and C1 controls ({@code \n},
 * {@code \r}, {@code \t}, {@code \e} for ESC, {@code \xHH} for the others), the Unicode line and paragraph separators
 * and the bidirectional controls ({@code \}{@code uHHHH}). Every other character, non-ASCII included, is left as it is.
 */
public final class Quote {

    /** Enough to recognise a value (a card model list, a time, a device ID); not enough to carry one. */
    public static final int MAX_CHARS = 64;

    private static final HexFormat HEX = HexFormat.of();

    private Quote() {
    }

    /** {@code "value"}, or {@code "first 64 characters…"(250000 bytes)} for a longer one; {@code null} as null. */
    public static String of(Object value) {
        if (value == null) {
            return "null";
        }
        var text = value.toString();
        var shown = new StringBuilder();
        int end = escape(text, MAX_CHARS, shown);
        return end == text.length() ? "\"" + shown + "\"" : "\"" + shown + "…\"" + length(text);
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
        var shown = new StringBuilder();
        int end = escape(text, max, shown);
        return end == text.length() ? shown.toString() : shown + "…" + length(text);
    }

    /**
     * The value whole, escaped the same way and not cut: a name or a reason printed where its length is bounded already
     * (a pod's name, a reason the extender cut), in a table or a report.
     */
    public static String escaped(Object value) {
        if (value == null) {
            return "null";
        }
        var text = value.toString();
        var shown = new StringBuilder(text.length());
        escape(text, Integer.MAX_VALUE, shown);
        return shown.toString();
    }

    /** Whether the character is one printed escaped: for a format with escapes of its own (JSON's) to escape the same ones. */
    public static boolean isEscaped(int codePoint) {
        return escapeOf(codePoint) != null;
    }

    /**
     * Appends the text's characters, escaped, while they fit in {@code max} characters as printed, never half a
     * surrogate pair or half an escape; returns where in the text it stopped.
     */
    private static int escape(String text, int max, StringBuilder shown) {
        int at = 0;
        while (at < text.length()) {
            int point = text.codePointAt(at);
            var escape = escapeOf(point);
            int width = escape != null ? escape.length() : Character.charCount(point);
            if (shown.length() + width > max) {
                return at;
            }
            if (escape != null) {
                shown.append(escape);
            } else {
                shown.appendCodePoint(point);
            }
            at += Character.charCount(point);
        }
        return at;
    }

    /** How a character is printed when it may not be printed as itself; null for one that may. */
    private static String escapeOf(int point) {
        return switch (point) {
            case '\n' -> "\\n";
            case '\r' -> "\\r";
            case '\t' -> "\\t";
            case 0x1b -> "\\e";
            default -> {
                if (Character.isISOControl(point)) {
                    yield "\\x" + HEX.toHexDigits((byte) point);
                }
                yield bidiOrSeparator(point) ? "\\u" + HEX.toHexDigits((short) point) : null;
            }
        };
    }

    /**
     * The line and paragraph separators, which start a line where they are honoured, and the bidirectional controls
     * (marks, embeddings, overrides, isolates), which reorder the text around them.
     */
    private static boolean bidiOrSeparator(int point) {
        return point == 0x2028 || point == 0x2029 || point == 0x061c || point == 0x200e || point == 0x200f
                || point >= 0x202a && point <= 0x202e || point >= 0x2066 && point <= 0x2069;
    }

    private static String length(String text) {
        return "(" + text.getBytes(StandardCharsets.UTF_8).length + " bytes)";
    }
}
