package io.hetgpu.extender.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hetgpu.gpu.bench.MachineLoad;
import io.hetgpu.gpu.bench.Percentiles;
import io.hetgpu.gpu.bench.ProcessStatus;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Many kube-schedulers' worth of load at once against the extender child of {@link ExtenderBenchmark}: what it
 * costs in memory and latency, and whether anything is lost. See {@code --soak} there.
 */
final class Soak {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** kube-scheduler's extender httpTimeout is 5 s shipped; a request unanswered after 30 s counts as lost. */
    private static final Duration GIVE_UP = Duration.ofSeconds(30);

    private Soak() {
    }

    static void run(HttpClient client, BenchCluster cluster, int size, List<String> forms, int clients, double seconds, long serverPid)
            throws Exception {
        var pod = BenchJob.TRAINING;
        var bodies = new ArrayList<byte[][]>();
        for (var form : forms) {
            String filter = form.equals("Nodes")
                    ? "{\"Pod\":" + pod + ",\"Nodes\":{\"metadata\":{},\"items\":[" + String.join(",", cluster.nodeJson.subList(0, size)) + "]},\"NodeNames\":null}"
                    : "{\"Pod\":" + pod + ",\"Nodes\":null,\"NodeNames\":" + BenchCluster.json(cluster.names.subList(0, size)) + "}";
            var filtered = JSON.readTree(send(client, "/filter", filter.getBytes(java.nio.charset.StandardCharsets.UTF_8)).body());
            String prioritize = form.equals("Nodes")
                    ? "{\"Pod\":" + pod + ",\"Nodes\":" + filtered.get("Nodes") + ",\"NodeNames\":null}"
                    : "{\"Pod\":" + pod + ",\"Nodes\":null,\"NodeNames\":" + filtered.get("NodeNames") + "}";
            // Encoded once: the load generator shares the machine's cores with the extender.
            bodies.add(new byte[][] {filter.getBytes(java.nio.charset.StandardCharsets.UTF_8), prioritize.getBytes(java.nio.charset.StandardCharsets.UTF_8)});
            System.out.printf("soak %s form, %d nodes: filter body %,d bytes, prioritize body %,d bytes%n", form, size, filter.length(), prioritize.length());
        }
        var latencies = Collections.synchronizedList(new ArrayList<Double>());
        var answered = new AtomicLong();
        var refused = new AtomicLong();
        var lost = new AtomicLong();
        var lostReasons = Collections.synchronizedList(new ArrayList<String>());
        var interval = MachineLoad.start();
        long until = System.nanoTime() + (long) (seconds * 1e9);
        var done = new CountDownLatch(clients);
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int c = 0; c < clients; c++) {
                var mine = bodies.get(c % bodies.size());
                pool.submit(() -> {
                    try {
                        for (int round = 0; System.nanoTime() < until; round++) {
                            var path = round % 2 == 0 ? "/filter" : "/prioritize";
                            var outcome = ask(client, path, mine[round % 2], latencies, refused);
                            if (outcome == null) {
                                answered.incrementAndGet();
                            } else {
                                lost.incrementAndGet();
                                if (lostReasons.size() < 5) {
                                    lostReasons.add(outcome);
                                }
                            }
                        }
                    } finally {
                        done.countDown();
                    }
                });
            }
            var probes = probe(done);
            done.await();
            var probeTimes = probes.join();
            double probeMax = probeTimes.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
            long probeFailures = probeTimes.stream().filter(t -> t < 0).count();
            System.out.printf("soak: %d clients, %.0f s, %d nodes (%s): %,d answered, %,d refused with 429 and retried, %d lost; "
                            + "p50 %.1f ms, p99 %.1f ms per answered request; /healthz p50 %.0f ms, slowest %.0f ms over %d probes, %d failed; "
                            + "extender peak RSS %d MiB (load %s, steal %s)%n",
                    clients, seconds, size, String.join("+", forms), answered.get(), refused.get(), lost.get(),
                    Percentiles.of(latencies, 50), Percentiles.of(latencies, 99),
                    Percentiles.of(probeTimes.stream().filter(t -> t >= 0).toList(), 50), probeMax,
                    probeTimes.size(), probeFailures, ProcessStatus.of(serverPid).kib("VmHWM") / 1024, MachineLoad.loadAverage(), interval.steal());
            lostReasons.forEach(reason -> System.out.println("  lost: " + reason));
        }
    }

    /**
     * One request until it is answered: 429s are retried after their Retry-After, as kube-scheduler retries the
     * pod. @return null when answered 200, else why it was lost
     */
    private static String ask(HttpClient client, String path, byte[] body, List<Double> latencies, AtomicLong refused) {
        long start = System.nanoTime();
        while (System.nanoTime() - start < GIVE_UP.toNanos()) {
            long t0 = System.nanoTime();
            HttpResponse<byte[]> response;
            try {
                response = send(client, path, body);
            } catch (Exception e) {
                return path + ": " + e;
            }
            if (response.statusCode() == 200) {
                latencies.add((System.nanoTime() - t0) / 1e6);
                return null;
            }
            if (response.statusCode() != 429) {
                return path + ": HTTP " + response.statusCode() + " " + new String(response.body(), 0, Math.min(200, response.body().length));
            }
            refused.incrementAndGet();
            long wait = response.headers().firstValueAsLong("Retry-After").orElse(1);
            try {
                Thread.sleep(Duration.ofSeconds(wait));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return path + ": interrupted";
            }
        }
        return path + ": not answered within " + GIVE_UP.toSeconds() + " s";
    }

    /** /healthz four times a second until the clients are done, each on a fresh client with a 1 s timeout; -1 is a failure. */
    private static java.util.concurrent.CompletableFuture<List<Double>> probe(CountDownLatch done) {
        return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            var times = new ArrayList<Double>();
            var request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ExtenderBenchmark.HETGPU_METRICS_PORT + "/healthz"))
                    .timeout(Duration.ofSeconds(1)).build();
            try {
                while (!done.await(250, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                    // A new connection each time, as the kubelet opens for each probe.
                    try (var kubelet = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(1)).build()) {
                        long t0 = System.nanoTime();
                        var status = kubelet.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
                        times.add(status == 200 ? (System.nanoTime() - t0) / 1e6 : -1);
                    } catch (java.io.IOException e) {
                        times.add(-1.0);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return times;
        }, Executors.newVirtualThreadPerTaskExecutor());
    }

    private static HttpResponse<byte[]> send(HttpClient client, String path, byte[] body) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ExtenderBenchmark.HETGPU_PORT + path))
                .timeout(GIVE_UP).header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }
}
