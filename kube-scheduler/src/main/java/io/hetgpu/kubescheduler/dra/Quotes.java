package io.hetgpu.kubescheduler.dra;

/** A value from a pod author or a driver as a reason quotes it: cut, so that a long one does not flood a message. */
final class Quotes {

    static final int MAX = 64;

    private Quotes() {
    }

    static String quote(String value) {
        if (value == null) {
            return "\"\"";
        }
        return "\"" + (value.length() > MAX ? value.substring(0, MAX) + "…" : value) + "\"";
    }
}
