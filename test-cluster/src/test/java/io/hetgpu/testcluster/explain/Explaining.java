package io.hetgpu.testcluster.explain;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hetgpu.testcluster.cli.TestClusterMain;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import java.util.ArrayList;
import java.util.List;

/** {@code hetgpu explain} run in this process as the command line runs it: its exit code, what it printed, and where. */
record Explaining(int code, String out, String err) {

    static Explaining run(String... args) {
        var out = new StringWriter();
        var err = new StringWriter();
        var command = TestClusterMain.commandLine();
        command.setOut(new PrintWriter(out, true));
        command.setErr(new PrintWriter(err, true));
        var all = new ArrayList<String>();
        all.add("explain");
        all.addAll(List.of(args));
        int code = command.execute(all.toArray(String[]::new));
        return new Explaining(code, out.toString(), err.toString());
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
