package io.hetgpu.testcluster.throughputs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.hetgpu.extender.throughput.CardPriors;
import io.hetgpu.extender.throughput.LearnedState;
import io.hetgpu.extender.throughput.LearnedStateCodec;
import io.hetgpu.testcluster.api.ApiServer;
import io.hetgpu.testcluster.cli.CommandRun;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code hetgpu throughputs} as an admin meets it, against the test cluster's API server: the learned table with its
 * sample counts, priors and shares; nothing learned yet; and a document, a cluster or an argument that is wrong, each one
 * line and an exit code.
 */
class ThroughputsCommandTest {

    private static final List<String> REPORT_KEYS = List.of("kind", "version", "cluster", "configMap", "found", "clusterCards", "notes",
            "classes");
    private static final List<String> CLASS_KEYS = List.of("class", "fastest", "samples", "cards");
    private static final List<String> CARD_KEYS = List.of("card", "perGpu", "samples", "podGpus", "prior", "ofBest", "onCluster");

    @TempDir
    Path dir;

    private ApiServer api;
    private Path kubeconfig;
    private final List<ApiServer.Request> requests = Collections.synchronizedList(new ArrayList<>());

    @BeforeEach
    void cluster() throws Exception {
        api = ApiServer.start();
        api.observe(requests::add);
        kubeconfig = api.writeKubeconfig(dir.resolve("kubeconfig"));
        try (var client = api.newClient()) {
            for (var node : List.of("a100-1:A100", "k80-1:K80", "t4-1:T4", "cpu-1:")) {
                var parts = node.split(":", -1);
                var builder = new NodeBuilder().withNewMetadata().withName(parts[0]).endMetadata();
                if (!parts[1].isEmpty()) {
                    builder.editMetadata().withLabels(Map.of("hetgpu.io/gpu.model", parts[1])).endMetadata();
                }
                client.nodes().resource(builder.build()).create();
            }
        }
        requests.clear();
    }

    @AfterEach
    void stop() {
        api.close();
    }

    /** resnet50 ran 14 times on A100 (two namespaces) and 9 times on K80; bert once on V100. */
    private static LearnedState learned() {
        return new LearnedState(List.of(
                new LearnedState.ClassSamples("resnet50", List.of(
                        new LearnedState.CardSamples("A100", List.of(
                                new LearnedState.NamespaceSamples("team-a", repeat(1250.0, 10)),
                                new LearnedState.NamespaceSamples("team-b", repeat(1250.0, 4)))),
                        new LearnedState.CardSamples("K80", List.of(
                                new LearnedState.NamespaceSamples("team-a", repeat(150.0, 9)))))),
                new LearnedState.ClassSamples("bert", List.of(
                        new LearnedState.CardSamples("V100", List.of(new LearnedState.NamespaceSamples("team-c", List.of(40.0))))))));
    }

    private static List<Double> repeat(double value, int times) {
        return IntStream.range(0, times).mapToObj(i -> value).toList();
    }

    private void persist(String document) {
        try (var client = api.newClient()) {
            client.configMaps().inNamespace("hetgpu-system").resource(new ConfigMapBuilder().withNewMetadata().withName("hetgpu-throughputs")
                    .withNamespace("hetgpu-system").endMetadata().withData(Map.of("throughputs.json", document)).build()).create();
        }
        requests.clear();
    }

    @Test
    void theLearnedTableShowsEachCardsFigureRunsPriorAndShareOfTheFastest() {
        persist(LearnedStateCodec.toJson(learned()));

        var shown = run("--kubeconfig", kubeconfig.toString());

        assertThat(shown.code()).as(shown.err()).isZero();
        assertThat(shown.err()).isEmpty();
        var lines = shown.out().lines().toList();
        assertThat(lines.getFirst()).isEqualTo("Learned workload speeds, ConfigMap hetgpu-system/hetgpu-throughputs on " + api.url()
                + ": 2 classes");
        // Shares are of the fastest card the class ran on; priors for cards the cluster has are shown, the others counted.
        var resnet = block(lines, "resnet50 ");
        assertThat(resnet.getFirst()).isEqualTo("resnet50 (23 runs; fastest: A100)");
        assertThat(resnet.get(1)).matches("  card +per GPU +runs +pod GPUs +of best");
        assertThat(resnet.subList(2, resnet.size() - 1)).satisfiesExactly(
                line -> assertThat(line).matches("  A100 +1,250 +14 +1 +1\\.00"),
                line -> assertThat(line).matches("  T4 +[\\d,.]+ +prior +- +0\\.\\d\\d"),
                line -> assertThat(line).matches("  K80 +150\\.0 +9 +1 +0\\.12"));
        assertThat(resnet.getLast()).matches("  and priors for \\d+ card models this cluster does not have \\(-o json lists them\\)");
        assertThat(block(lines, "bert ").getFirst()).isEqualTo("bert (1 run; fastest: V100)");
        // Read only: one get of the ConfigMap and one list of nodes, named as this command.
        assertThat(requests).extracting(ApiServer.Request::method).containsOnly("GET");
        assertThat(requests).extracting(ApiServer.Request::userAgent).allSatisfy(agent -> assertThat(agent).startsWith("hetgpu-throughputs"));
    }

    @Test
    void theJsonListsEveryCardWithOneShapeAsTheReferenceDocumentsIt() throws Exception {
        persist(LearnedStateCodec.toJson(learned()));

        var shown = run("--kubeconfig", kubeconfig.toString(), "-o", "json");

        assertThat(shown.code()).as(shown.err()).isZero();
        var json = new ObjectMapper().readTree(shown.out());
        assertThat(fields(json)).containsExactlyElementsOf(REPORT_KEYS);
        assertThat(json.path("kind").asText()).isEqualTo("HetgpuThroughputs");
        assertThat(json.path("found").asBoolean()).isTrue();
        assertThat(texts(json.path("clusterCards"))).containsExactly("A100", "K80", "T4");
        var resnet = json.path("classes").get(1);
        assertThat(fields(resnet)).containsExactlyElementsOf(CLASS_KEYS);
        assertThat(resnet.path("class").asText()).isEqualTo("resnet50");
        assertThat(resnet.path("samples").asInt()).isEqualTo(23);
        assertThat(fields(resnet.path("cards").get(0))).containsExactlyElementsOf(CARD_KEYS);
        var a100 = card(resnet, "A100");
        assertThat(a100.path("perGpu").asDouble()).isEqualTo(1250.0);
        assertThat(a100.path("samples").asInt()).isEqualTo(14);
        assertThat(a100.path("prior").asBoolean()).isFalse();
        assertThat(a100.path("podGpus").asText()).isEqualTo("1");
        assertThat(a100.path("onCluster").asBoolean()).isTrue();
        assertThat(resnet.path("fastest").asText()).isEqualTo("A100");
        assertThat(a100.path("ofBest").asDouble()).isEqualTo(1.0);
        assertThat(card(resnet, "K80").path("ofBest").asDouble()).isEqualTo(150.0 / 1250.0);
        var h100 = card(resnet, "H100");
        assertThat(h100.path("prior").asBoolean()).isTrue();
        assertThat(h100.path("samples").asInt()).isZero();
        assertThat(h100.path("podGpus").isNull()).as("a prior was measured on no pods").isTrue();
        assertThat(h100.path("onCluster").asBoolean()).isFalse();
        assertThat(h100.path("ofBest").asDouble()).isEqualTo(h100.path("perGpu").asDouble() / 1250.0).isGreaterThan(1);
        var perGpu = new ArrayList<Double>();
        resnet.path("cards").forEach(row -> perGpu.add(row.path("perGpu").asDouble()));
        assertThat(perGpu).as("fastest first").isSortedAccordingTo(java.util.Comparator.reverseOrder());
        // A prior is the class's own figures scaled by relative card speeds, as the extender's priors give it.
        assertThat(h100.path("perGpu").asDouble()).isCloseTo(CardPriors.extrapolate(Map.of("A100", 1250.0, "K80", 150.0), "H100"),
                org.assertj.core.data.Offset.offset(1e-6));

        var page = Files.readString(ProjectFiles.manifests().resolveSibling("docs").resolve("reference.md"));
        var section = page.substring(page.indexOf("### `./hetgpu throughputs`"));
        for (var key : concat(REPORT_KEYS, CLASS_KEYS, CARD_KEYS)) {
            assertThat(section).as("docs/reference.md's throughputs section documents %s", key).contains("`" + key + "`");
        }
    }

    @Test
    void noConfigMapYetSaysNothingIsLearnedAndHowAJobGetsMeasured() {
        var shown = run("--kubeconfig", kubeconfig.toString());

        assertThat(shown.code()).as(shown.err()).isZero();
        assertThat(shown.out()).startsWith("nothing learned yet: no ConfigMap hetgpu-system/hetgpu-throughputs on " + api.url())
                .contains("hetgpu.io/workload", "hetgpu.io/work: <units>", "/dev/termination-log", "docs/concepts.md#learned-speeds");
    }

    @Test
    void anotherNamespaceIsReadWhereTheExtenderRunsElsewhere() {
        try (var client = api.newClient()) {
            client.configMaps().inNamespace("gpu-ops").resource(new ConfigMapBuilder().withNewMetadata().withName("hetgpu-throughputs")
                    .withNamespace("gpu-ops").endMetadata().withData(Map.of("throughputs.json", LearnedStateCodec.toJson(learned()))).build())
                    .create();
        }

        assertThat(run("--kubeconfig", kubeconfig.toString()).out()).startsWith("nothing learned yet");
        assertThat(run("--kubeconfig", kubeconfig.toString(), "-n", "gpu-ops").out())
                .startsWith("Learned workload speeds, ConfigMap gpu-ops/hetgpu-throughputs");
    }

    @Test
    void aDocumentTheExtenderWouldRefuseIsOneLineNamingTheFieldAndValue() {
        persist("""
                {"schema": 1, "classes": [{"class": "resnet50", "cards": [{"card": "A100",
                  "namespaces": [{"namespace": "team-a", "throughputs": [1250, -3]}]}]}]}""");

        assertOneLine(run("--kubeconfig", kubeconfig.toString()), 1,
                "ConfigMap hetgpu-system/hetgpu-throughputs, throughputs.json: classes[0].cards[0].namespaces[0].throughputs[1]: "
                        + "expected a number above 0, got \"-3\"");
    }

    @Test
    void aConfigMapWithoutTheDocumentIsOneLineNamingTheKey() {
        try (var client = api.newClient()) {
            client.configMaps().inNamespace("hetgpu-system").resource(new ConfigMapBuilder().withNewMetadata().withName("hetgpu-throughputs")
                    .withNamespace("hetgpu-system").endMetadata().withData(Map.of("other", "x")).build()).create();
        }

        assertOneLine(run("--kubeconfig", kubeconfig.toString()), 1, "ConfigMap hetgpu-system/hetgpu-throughputs: no data key throughputs.json");
    }

    @Test
    void aClusterThatRefusesTheConfigMapIsOneLineSayingWhatTheCommandNeeds() {
        api.interfere(request -> request.path().contains("/configmaps") ? new ApiServer.Interference.Refused(403) : ApiServer.Interference.NONE);

        assertOneLine(run("--kubeconfig", kubeconfig.toString()), 1, "reading ConfigMap hetgpu-system/hetgpu-throughputs from " + api.url()
                + " failed: HTTP 403", "needs get on configmaps in hetgpu-system");
    }

    @Test
    void nodesThatCannotBeListedAreANoteAndEveryPriorIsShown() {
        persist(LearnedStateCodec.toJson(learned()));
        api.interfere(request -> request.path().startsWith("/api/v1/nodes") ? new ApiServer.Interference.Refused(403) : ApiServer.Interference.NONE);

        var shown = run("--kubeconfig", kubeconfig.toString());

        assertThat(shown.code()).as(shown.err()).isZero();
        assertThat(shown.out()).contains("\n  B200 ", "\n  H100 ").doesNotContain("not on this cluster").doesNotContain("and priors for");
        assertThat(shown.out().lines().toList().getLast()).startsWith("note: listing nodes failed (HTTP 403")
                .endsWith("priors are shown for every card model, not only the cluster's");
    }

    @Test
    void anOutputThatIsNeitherTextNorJsonIsRefusedBeforeTheClusterIsAsked() {
        assertOneLine(run("--kubeconfig", kubeconfig.toString(), "-o", "yaml"), 2, "--output: expected text or json, got \"yaml\"");
        assertThat(requests).isEmpty();
    }

    @Test
    void aContextTheKubeconfigDoesNotHoldIsOneLine() {
        assertOneLine(run("--kubeconfig", kubeconfig.toString(), "--context", "prod"), 2, "--kubeconfig ", "no context \"prod\"");
    }

    private static CommandRun run(String... args) {
        return CommandRun.of("throughputs", args);
    }

    private static void assertOneLine(CommandRun shown, int code, String... parts) {
        assertThat(shown.code()).as(shown.err()).isEqualTo(code);
        assertThat(shown.out()).isEmpty();
        assertThat(shown.err().lines().toList()).as(shown.err()).singleElement().satisfies(line -> {
            assertThat(line).startsWith("hetgpu throughputs: ").doesNotContain("Exception");
            for (var part : parts) {
                assertThat(line).contains(part);
            }
        });
    }

    /** The lines of one class's table: from its heading to the blank line after it. */
    private static List<String> block(List<String> lines, String heading) {
        int start = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(heading + "(")) {
                start = i;
                break;
            }
        }
        assertThat(start).as("a table headed %s in %s", heading, lines).isNotNegative();
        int end = start;
        while (end < lines.size() && !lines.get(end).isBlank()) {
            end++;
        }
        return lines.subList(start, end);
    }

    private static JsonNode card(JsonNode workload, String model) {
        for (var card : workload.path("cards")) {
            if (card.path("card").asText().equals(model)) {
                return card;
            }
        }
        throw new AssertionError("no card " + model + " in " + workload);
    }

    private static List<String> fields(JsonNode node) {
        var names = new ArrayList<String>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static List<String> texts(JsonNode array) {
        var texts = new ArrayList<String>();
        array.forEach(value -> texts.add(value.asText()));
        return texts;
    }

    @SafeVarargs
    private static List<String> concat(List<String>... lists) {
        var all = new ArrayList<String>();
        for (var list : lists) {
            all.addAll(list);
        }
        return all;
    }
}
