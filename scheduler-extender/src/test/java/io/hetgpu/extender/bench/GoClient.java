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
     * Sends round after round to the extenders on {@code ports} (round i: filter body i mod n, then its prioritize body):
     * 5 s untimed to each in turn, then {@code seconds} timed for each (none when 0), the extenders taking turns half a
     * second at a time, so that a while the machine runs slower falls on both. Their rounds, in the order of the ports.
     *
     * @param filterBodies the bodies every port gets, or one list per port
     */
    List<ExtenderBenchmark.Rounds> rounds(List<Integer> ports, List<List<byte[]>> filterBodies, List<List<byte[]>> prioritizeBodies,
                                          double seconds) throws IOException, InterruptedException {
        var files = new ArrayList<Path>();
        try {
            var filters = write(filterBodies, "filter", files);
            var prioritizes = write(prioritizeBodies, "prioritize", files);
            var urls = String.join(",", ports.stream().map(port -> "http://127.0.0.1:" + port).toList());
            var process = new ProcessBuilder(binary, "-url", urls, "-filter", filters, "-prioritize", prioritizes,
                    "-warmup", "5s", "-seconds", Double.toString(seconds)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            var filter = new ArrayList<List<Double>>();
            var prioritize = new ArrayList<List<Double>>();
            var filterBytes = new long[ports.size()];
            var prioritizeBytes = new long[ports.size()];
            for (int t = 0; t < ports.size(); t++) {
                filter.add(new ArrayList<>());
                prioritize.add(new ArrayList<>());
            }
            try (var out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.US_ASCII))) {
                String line;
                while ((line = out.readLine()) != null) {
                    var fields = line.split(" ");
                    if (fields[0].equals("bytes")) {
                        int target = Integer.parseInt(fields[1]);
                        filterBytes[target] = Long.parseLong(fields[2]);
                        prioritizeBytes[target] = Long.parseLong(fields[3]);
                    } else {
                        int target = Integer.parseInt(fields[0]);
                        filter.get(target).add(Long.parseLong(fields[1]) / 1e6);
                        prioritize.get(target).add(Long.parseLong(fields[2]) / 1e6);
                    }
                }
            }
            int exit = process.waitFor();
            if (exit != 0) {
                throw new IllegalStateException(binary + " exited with " + exit + " against " + urls + " (its error is above)");
            }
            var rounds = new ArrayList<ExtenderBenchmark.Rounds>();
            for (int t = 0; t < ports.size(); t++) {
                rounds.add(new ExtenderBenchmark.Rounds(filter.get(t), prioritize.get(t), filterBytes[t], prioritizeBytes[t]));
            }
            return rounds;
        } finally {
            for (var file : files) {
                Files.deleteIfExists(file);
            }
        }
    }

    /** The bodies written to files: the files of one group joined by ",", the groups by ";", as the client reads them. */
    private static String write(List<List<byte[]>> groups, String verb, List<Path> files) throws IOException {
        var written = new ArrayList<String>();
        for (var bodies : groups) {
            var names = new ArrayList<String>();
            for (var body : bodies) {
                var file = Files.createTempFile("hetgpu-bench-" + verb, ".json");
                files.add(file);
                Files.write(file, body);
                names.add(file.toString());
            }
            written.add(String.join(",", names));
        }
        return String.join(";", written);
    }
}
