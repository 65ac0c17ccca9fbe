package io.hetgpu.testcluster.explain;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hetgpu.testcluster.cli.CommandRun;
import java.io.UncheckedIOException;
import io.hetgpu.testcluster.cluster.ProjectFiles;

/** {@code hetgpu explain} run in this process as the command line runs it: its exit code, what it printed, and where. */
record Explaining(int code, String out, String err) {

    static Explaining run(String... args) {
        var run = CommandRun.of("explain", args);
        return new Explaining(run.code(), run.out(), run.err());
    }

    /** A file of {@code manifests/samples}, as an absolute path. */
    static String sample(String file) {
        try {
            return ProjectFiles.manifests().resolve("samples").resolve(file).toAbsolutePath().toString();
        } catch (java.io.IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    JsonNode json() {
        try {
            return new ObjectMapper().readTree(out);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new UncheckedIOException("not JSON: " + out + err, e);
        }
    }

    /** The pod of the report of that name. */
    JsonNode pod(String name) {
        for (var pod : json().path("pods")) {
            if (pod.path("name").asText().equals(name)) {
                return pod;
            }
        }
        throw new AssertionError("no pod " + name + " in " + out);
    }
}
