package io.hetgpu.extender.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The benchmark's requests sent by {@code scheduler-extender/bench/extender-client}: Go's net/http client, as
 * kube-scheduler's HTTPExtender holds it, one kept-alive connection and one call at a time. What the extender meets in
 * a cluster is that client's way of writing requests and reading answers (its reader and writer goroutines, a request
 * written in 4 KB pieces), not the JVM's.
 */
final class GoClient {

    private final String binary;

    GoClient(String binary) {
        this.binary = binary;
    }

    /**
     * Sends round after round to the extender on {@code port} (round i: filter body i mod n, then its prioritize body):
     * 5 s untimed, then {@code seconds} timed (none when 0).
     */
    ExtenderBenchmark.Rounds rounds(int port, List<byte[]> filterBodies, List<byte[]> prioritizeBodies, double seconds) throws IOException, InterruptedException {
        var files = new ArrayList<Path>();
        try {
            var filters = write(filterBodies, "filter", files);
            var prioritizes = write(prioritizeBodies, "prioritize", files);
            var process = new ProcessBuilder(binary, "-url", "http://127.0.0.1:" + port, "-filter", filters, "-prioritize", prioritizes,
                    "-warmup", "5s", "-seconds", Double.toString(seconds)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            var filter = new ArrayList<Double>();
            var prioritize = new ArrayList<Double>();
            long filterBytes = 0;
            long prioritizeBytes = 0;
            try (var out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.US_ASCII))) {
                String line;
                while ((line = out.readLine()) != null) {
                    var fields = line.split(" ");
                    if (fields[0].equals("bytes")) {
                        filterBytes = Long.parseLong(fields[1]);
                        prioritizeBytes = Long.parseLong(fields[2]);
                    } else {
                        filter.add(Long.parseLong(fields[0]) / 1e6);
                        prioritize.add(Long.parseLong(fields[1]) / 1e6);
                    }
                }
            }
            int exit = process.waitFor();
            if (exit != 0) {
                throw new IllegalStateException(binary + " exited with " + exit + " against port " + port + " (its error is above)");
            }
            return new ExtenderBenchmark.Rounds(filter, prioritize, filterBytes, prioritizeBytes);
        } finally {
            for (var file : files) {
                Files.deleteIfExists(file);
            }
        }
    }

    private static String write(List<byte[]> bodies, String verb, List<Path> files) throws IOException {
        var names = new ArrayList<String>();
        for (var body : bodies) {
            var file = Files.createTempFile("hetgpu-bench-" + verb, ".json");
            files.add(file);
            Files.write(file, body);
            names.add(file.toString());
        }
        return String.join(",", names);
    }
}
