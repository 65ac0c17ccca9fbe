package io.hetgpu.gpu.cli;

import com.fasterxml.jackson.core.JsonProcessingException;

/**
 * A YAML or JSON syntax error of a file hetgpu reads (a configuration, a tier table, a machine profile, a workload),
 * told in one line as every error of hetgpu's programs is. YAML's parser quotes the offending lines, indented, with a
 * caret under them, between its sentences; the sentences stay and the location is said once.
 */
public final class ParseErrors {

    private ParseErrors() {
    }

    /** The parser's sentences, joined by "; ". */
    public static String sentences(JsonProcessingException e) {
        var message = e.getOriginalMessage() == null ? e.toString() : e.getOriginalMessage();
        return String.join("; ", message.lines()
                .filter(line -> !line.isBlank() && !Character.isWhitespace(line.charAt(0)) && !line.strip().equals("^")).toList());
    }

    /** "line 3, column 1: ", to lead a message, or "" where the parser gave no location. */
    public static String at(JsonProcessingException e) {
        var where = location(e);
        return where.isEmpty() ? "" : where + ": ";
    }

    /** "line 3, column 1", or "" where the parser gave no location. */
    public static String location(JsonProcessingException e) {
        var at = e.getLocation();
        return at == null ? "" : "line " + at.getLineNr() + ", column " + at.getColumnNr();
    }
}
