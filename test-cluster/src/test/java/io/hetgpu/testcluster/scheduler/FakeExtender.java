package io.hetgpu.testcluster.scheduler;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/** An extender on loopback whose answers a test programs per verb, recording every request body. */
final class FakeExtender implements AutoCloseable {

    record Answer(int status, String body) {
    }

    private final HttpServer server;
    private final ObjectMapper json = new ObjectMapper();
    private final Map<String, Function<JsonNode, Answer>> answers = new ConcurrentHashMap<>();
    final List<Map.Entry<String, JsonNode>> requests = new CopyOnWriteArrayList<>();

    FakeExtender() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            var verb = exchange.getRequestURI().getPath().replaceFirst("^/hetgpu/", "");
            var body = json.readTree(exchange.getRequestBody().readAllBytes());
            requests.add(Map.entry(verb, body));
            var answer = answers.getOrDefault(verb, b -> new Answer(404, "")).apply(body);
            var bytes = answer.body().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(answer.status(), bytes.length == 0 ? -1 : bytes.length);
            if (bytes.length > 0) {
                exchange.getResponseBody().write(bytes);
            }
            exchange.close();
        });
        server.start();
    }

    String urlPrefix() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/hetgpu";
    }

    void answer(String verb, Function<JsonNode, Answer> answer) {
        answers.put(verb, answer);
    }

    List<JsonNode> requestsFor(String verb) {
        return requests.stream().filter(r -> r.getKey().equals(verb)).map(Map.Entry::getValue).toList();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
