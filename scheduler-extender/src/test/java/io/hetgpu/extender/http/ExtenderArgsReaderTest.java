package io.hetgpu.extender.http;

import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.WireNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.extender.KubeJson;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ExtenderArgsReaderTest {

    private final ExtenderArgsReader reader = new ExtenderArgsReader(ExtenderArgsReader.kubernetesMapper());
    private final String pod = KubeJson.text("pod-pytorch-worker.json");

    @Test
    void aByteIdenticalPodIsReadOnceAndAnotherPodAfresh() throws Exception {
        var filter = reader.read(body("{\"Pod\":" + pod + ",\"Nodes\":null,\"NodeNames\":[\"a\",\"b\"]}"));
        var prioritize = reader.read(body("{\"NodeNames\":[\"a\"],\"Pod\":" + pod + "}"));
        var other = reader.read(body("{\"Pod\":" + pod.replace("\"nvidia.com/gpu\": \"4\"", "\"nvidia.com/gpu\": \"2\"") + ",\"NodeNames\":[\"a\"]}"));

        assertThat(prioritize.pod()).isSameAs(filter.pod());
        assertThat(filter.nodeNames()).containsExactly("a", "b");
        assertThat(prioritize.nodeNames()).containsExactly("a");
        assertThat(other.pod()).isNotSameAs(filter.pod());
        assertThat(other.pod().getSpec().getContainers().getFirst().getResources().getLimits().get("nvidia.com/gpu").getAmount())
                .isEqualTo("2");
        assertThat(filter.pod().getSpec().getContainers().getFirst().getResources().getLimits().get("nvidia.com/gpu").getAmount())
                .isEqualTo("4");
    }

    @Test
    void podsThatDifferInAnyOneByteAreReadAsTheirOwn() throws Exception {
        // The same length, one character apart, at every position of the pod's name: the hash reads only some bytes.
        var name = "\"name\": \"";
        int at = pod.indexOf(name) + name.length();
        var first = reader.read(body("{\"Pod\":" + pod + ",\"NodeNames\":[\"a\"]}")).pod();
        for (int i = at; i < pod.indexOf('"', at); i++) {
            var changed = pod.substring(0, i) + (pod.charAt(i) == 'x' ? 'y' : 'x') + pod.substring(i + 1);
            var read = reader.read(body("{\"Pod\":" + changed + ",\"NodeNames\":[\"a\"]}")).pod();

            assertThat(read).isNotSameAs(first);
            assertThat(read.getMetadata().getName()).isNotEqualTo(first.getMetadata().getName()).hasSameSizeAs(first.getMetadata().getName());
            assertThat(reader.read(body("{\"Pod\":" + pod + ",\"NodeNames\":[\"a\"]}")).pod()).isSameAs(first);
        }
    }

    /**
     * The pod read last is known by its bytes, so that prioritize does not scan it for its end: by all of them, and only
     * where the body holds all of them.
     */
    @Test
    void thePodReadLastIsKnownByAllOfItsBytesAndOnlyByThem() throws Exception {
        var whole = pod.strip();
        var first = reader.read(body("{\"Pod\":" + whole + ",\"NodeNames\":[\"a\"]}")).pod();

        var again = reader.read(body("{\"Pod\":" + whole + " \n ,\"NodeNames\":[\"b\"]}"));
        assertThat(again.pod()).isSameAs(first);
        assertThat(again.nodeNames()).containsExactly("b");

        // The same bytes but for its last: one more field before the close makes another pod.
        var longer = whole.substring(0, whole.length() - 1) + ",\"status\":{\"phase\":\"Pending\"}}";
        var other = reader.read(body("{\"Pod\":" + longer + ",\"NodeNames\":[\"a\"]}")).pod();
        assertThat(other).isNotSameAs(first);
        assertThat(other.getStatus().getPhase()).isEqualTo("Pending");

        // Cut short of its close: refused, not taken for the pod it begins as.
        reader.read(body("{\"Pod\":" + whole + ",\"NodeNames\":[\"a\"]}"));
        assertThat(catchThrowableOfRead("{\"Pod\":" + whole.substring(0, whole.length() - 1))).isInstanceOf(WireFormatException.class)
                .hasMessageContaining("line");
    }

    /**
     * The event loops share one reader and its pod read last: a loop that finds another's pod there must still read its
     * own. Four threads read three pods that differ only in their names, in turn, all at once.
     */
    @Test
    void readersOnSeveralThreadsEachGetTheirOwnPod() throws Exception {
        var names = List.of("worker-a", "worker-b", "worker-c");
        var bodies = names.stream().map(name -> body("{\"Pod\":" + pod.replaceFirst("\"name\": \"[^\"]*\"", "\"name\": \"" + name + "\"")
                + ",\"NodeNames\":[\"" + name + "\"]}")).toList();
        var start = new java.util.concurrent.CountDownLatch(1);
        var threads = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            var done = new ArrayList<java.util.concurrent.Future<Integer>>();
            for (int t = 0; t < 4; t++) {
                int first = t;
                done.add(threads.submit(() -> {
                    start.await();
                    int read = 0;
                    for (int i = 0; i < 3_000; i++) {
                        int which = (first + i) % bodies.size();
                        var args = reader.read(bodies.get(which));
                        assertThat(args.pod().getMetadata().getName()).isEqualTo(names.get(which)).isEqualTo(args.nodeNames().getFirst());
                        read++;
                    }
                    return read;
                }));
            }
            start.countDown();
            for (var each : done) {
                assertThat(each.get(60, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(3_000);
            }
        } finally {
            threads.shutdownNow();
        }
    }

    /** The reader of Pods is built by {@link ExtenderArgsReader#prepare}, so that the first request does not wait for it. */
    @Test
    void preparingBuildsTheReaderOfPodsBeforeTheFirstRequest() {
        var mapper = new RootReaders();
        var prepared = new ExtenderArgsReader(mapper);
        assertThat(mapper.built()).isEmpty();

        prepared.prepare();

        assertThat(mapper.built()).contains(io.fabric8.kubernetes.api.model.Pod.class);
    }

    /** The mapper the server's reader uses, telling which types it has built a root reader for. */
    private static final class RootReaders extends com.fasterxml.jackson.databind.ObjectMapper {
        RootReaders() {
            disable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        }

        java.util.List<Class<?>> built() {
            return _rootDeserializers.keySet().stream().<Class<?>>map(type -> type.getRawClass()).toList();
        }
    }

    @Test
    void aPodOfTheWrongShapeIsStillAWireFormatErrorAndIsNotKept() {
        var bad = body("{\"Pod\":{\"spec\":{\"containers\":5}},\"NodeNames\":[\"a\"]}");
        for (int attempt = 0; attempt < 2; attempt++) {
            assertThatThrownBy(() -> reader.read(bad)).isInstanceOf(WireFormatException.class)
                    .hasMessageStartingWith("request body is not valid ExtenderArgs JSON");
        }
        assertThatThrownBy(() -> reader.read(body("{\"Pod\":{\"spec\":{\"containers\":[}},\"NodeNames\":[]}")))
                .isInstanceOf(WireFormatException.class).hasMessageContaining("line 1");
    }

    @Test
    void eachNodeCarriesTheAllocatableCountOfTheConfiguredGpuResource() throws Exception {
        var nodes = "{\"Nodes\":{\"items\":[" + KubeJson.text("node-gfd-v100.json") + "," + KubeJson.text("node-cpu.json")
                + ",{\"metadata\":{\"name\":\"odd\"},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":null,\"example.com/gpu\":2}}}]}}";

        var facts = reader.read(body(nodes)).nodes().stream().map(WireNode::facts).toList();
        assertThat(facts).extracting(f -> f.gpuAllocatable()).containsExactly("8", null, null);
        assertThat(facts.getFirst().labels()).containsEntry("nvidia.com/gpu.product", "Tesla-V100-SXM2-16GB");

        var other = new ExtenderArgsReader(ExtenderArgsReader.kubernetesMapper(), "example.com/gpu").read(body(nodes)).nodes();
        assertThat(other.getLast().facts().gpuAllocatable()).isEqualTo("2");
    }

    private static byte[] body(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void nodeNamesComeAsTheRequestsBytesAndDecodeAsJsonWouldDecodeThem() throws Exception {
        var args = reader.read(body("{\"Pod\":" + pod + ",\"NodeNames\": [ \"node-1\" ,\"\", \"n\\u006fde-2\",\"gpu-\u00e9\"\n]}"));

        assertThat(args.nodeNames()).isInstanceOf(io.hetgpu.extender.wire.RequestedNames.class)
                .containsExactly("node-1", "", "node-2", "gpu-\u00e9");
        var asked = (io.hetgpu.extender.wire.RequestedNames) args.nodeNames();
        assertThat(asked.plain(0)).isTrue();
        assertThat(asked.plain(2)).as("an escape: decoded, not compared as bytes").isFalse();
        assertThat(asked.plain(3)).as("UTF-8 beyond ASCII").isFalse();
        assertThat(asked.subset(new int[] {3, 0}, 2)).containsExactly("gpu-\u00e9", "node-1");
    }

    /**
     * Room for the names is guessed from the first name's length; names longer than the first outgrow the guess, shorter
     * ones leave room unused, and neither shows in the list.
     */
    @Test
    void nodeNamesOfMixedLengthsAreReadWhateverTheFirstNameGuessed() throws Exception {
        var longAfterShort = new ArrayList<String>(List.of("n"));
        var shortAfterLong = new ArrayList<String>(List.of("a-node-name-much-longer-than-the-others-in-its-rack-0"));
        for (int i = 0; i < 20_000; i++) {
            longAfterShort.add("gpu-node-in-rack-" + i % 40 + "-number-" + i);
            shortAfterLong.add("n" + i);
        }
        for (var names : List.of(longAfterShort, shortAfterLong)) {
            var json = "[" + String.join(",", names.stream().map(name -> "\"" + name + "\"").toList()) + "]";
            var args = reader.read(body("{\"Pod\":" + pod + ",\"Nodes\":null,\"NodeNames\":" + json + "}"));

            assertThat(args.nodeNames()).hasSize(names.size()).containsExactlyElementsOf(names);
            assertThatThrownBy(() -> args.nodeNames().get(names.size())).isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    @Test
    void theRoomGuessedForNamesIsBoundedByTheBytesLeftAndACap() {
        // 5,000 names of 10 characters, each 13 bytes with its quotes and comma: room for them all and an eighth more.
        assertThat(ExtenderArgsReader.expectedNames(5_000 * 13, 10)).isBetween(5_000, 5_000 + 5_000 / 8 + 16);
        // A one-character name followed by a large Pod: no more than three bytes a name, and no more than the cap.
        assertThat(ExtenderArgsReader.expectedNames(30, 1)).isEqualTo(11);
        assertThat(ExtenderArgsReader.expectedNames(1_500_000, 1)).isEqualTo(ExtenderArgsReader.MOST_NAMES_EXPECTED);
    }

    @Test
    void nodeNamesThatAreNotAllStringsAreRefusedNamingTheEntry() {
        assertThatThrownBy(() -> reader.read(body("{\"Pod\":" + pod + ",\"NodeNames\":[\"a\",7]}")))
                .isInstanceOf(WireFormatException.class).hasMessageContaining("NodeNames[1]: expected a node name");
        assertThat(catchThrowableOfRead("{\"Pod\":" + pod + ",\"NodeNames\":[\"a\"")).isInstanceOf(WireFormatException.class);
    }

    /**
     * kube-scheduler writes NodeNames last, and the reader then ends with the scanned array; a field after it, or
     * anything but the object's end, is still read or refused by the parser.
     */
    @Test
    void nodeNamesEndTheRequestOrAreFollowedByFieldsStillRead() throws Exception {
        var last = reader.read(body("{\"Pod\":" + pod + ",\"Nodes\":null,\"NodeNames\":[\"a\",\"b\"] \n} \n"));
        var first = reader.read(body("{\"NodeNames\":[\"a\",\"b\"],\"Nodes\":null,\"Pod\":" + pod + "}"));

        assertThat(last.nodeNames()).containsExactly("a", "b");
        assertThat(first.nodeNames()).containsExactly("a", "b");
        assertThat(first.pod()).isSameAs(last.pod()).isNotNull();
        assertThat(catchThrowableOfRead("{\"Pod\":" + pod + ",\"NodeNames\":[\"a\"],}")).isInstanceOf(WireFormatException.class);
        assertThat(catchThrowableOfRead("{\"Pod\":" + pod + ",\"NodeNames\":[\"a\"] \"x\"}")).isInstanceOf(WireFormatException.class);
    }

    /** The reader finds a pod's end by its brackets: brackets and escaped quotes inside its strings are text. */
    @Test
    void aPodWhoseStringsHoldBracketsAndEscapedQuotesIsReadWhole() throws Exception {
        // On the wire: "note": "a } ] \" { [ \\"
        var withNote = pod.replace("\"annotations\": {", "\"annotations\": {\"note\": \"a } ] \\\" { [ \\\\\",");
        var args = reader.read(body("{\"Pod\":" + withNote + ",\"NodeNames\":[\"a\"]}"));

        assertThat(args.pod().getMetadata().getAnnotations()).containsEntry("note", "a } ] \" { [ \\")
                .containsEntry("hetgpu.io/gpu-models", "V100,A100");
        assertThat(args.nodeNames()).containsExactly("a");
    }

    /** Fields the extender does not read are stepped over whatever they hold, and the fields after them still read. */
    @Test
    void fieldsTheExtenderDoesNotReadAreSkippedWhateverTheyHold() throws Exception {
        for (var extra : java.util.List.of("123", "-1.5e3", "\"text, with } and ]\"", "true", "null", "[1, {\"a\": [\"]\"]}]", "{}")) {
            var args = reader.read(body("{\"Extra\": " + extra + ", \"Pod\":" + pod + ", \"Other\":" + extra + " ,\"NodeNames\":[\"a\"]}"));

            assertThat(args.nodeNames()).as(extra).containsExactly("a");
            assertThat(args.pod()).as(extra).isNotNull();
        }
        var names = reader.read(body("{\"NodeNames\": [\"a\", \"b\"]  , \"Pod\": null}"));
        assertThat(names.nodeNames()).containsExactly("a", "b");
        assertThat(names.pod()).isNull();
    }

    /** Go's decoder matches field names without regard to case, escapes decoded; so does the reader. */
    @Test
    void fieldNamesMatchInAnyCaseAndWithEscapes() throws Exception {
        var args = reader.read(body("{\"pOD\":" + pod + ",\"node\\u004eames\":[\"a\"],\"nodes\":null}"));

        assertThat(args.pod().getMetadata().getName()).isNotEmpty();
        assertThat(args.nodeNames()).containsExactly("a");
        assertThat(args.nodes()).isNull();
    }

    /** Whatever breaks, and wherever: a wire-format error that says at which line and column, never a wrong read. */
    @Test
    void malformedRequestsAreRefusedNamingWhereTheyBreak() {
        assertThat(catchThrowableOfRead("{\"Pod\":{\"metadata\":{\"name\":\"p\"}"))
                .isInstanceOf(WireFormatException.class).hasMessageContaining("line 1, column 8").hasMessageContaining("does not end");
        assertThat(catchThrowableOfRead("{\"Pod\" {}}")).isInstanceOf(WireFormatException.class)
                .hasMessageContaining("line 1, column 8: expected ':'");
        assertThat(catchThrowableOfRead("{\n  \"Pod\": nul,\n  \"NodeNames\": [\"a\"]}")).isInstanceOf(WireFormatException.class)
                .hasMessageContaining("line 2");
        assertThat(catchThrowableOfRead("{\"Extra\": [1, }], \"NodeNames\": [\"a\"]}")).as("a field the extender does not read")
                .isInstanceOf(WireFormatException.class).hasMessageContaining("line 1");
        // A node past the pod's many lines: the place is counted in the whole request, not in the node.
        var broken = "{\"Pod\":" + pod + ",\n\"Nodes\": {\"items\": [{\"metadata\": ]}]}}";
        int at = broken.indexOf(": ]") + 2;
        long line = broken.substring(0, at).chars().filter(c -> c == '\n').count() + 1;
        assertThat(catchThrowableOfRead(broken)).isInstanceOf(WireFormatException.class)
                .hasMessageContaining("line " + line + ", column " + (at - broken.lastIndexOf('\n', at)));
        assertThat(catchThrowableOfRead("{\"Pod\":" + pod + " \"NodeNames\":[]}")).isInstanceOf(WireFormatException.class)
                .hasMessageContaining("expected ',' or '}'");
        assertThat(catchThrowableOfRead("{\"NodeNames\":[\"a\"]")).isInstanceOf(WireFormatException.class);
        assertThat(catchThrowableOfRead("[]")).isInstanceOf(WireFormatException.class).hasMessageContaining("expected a JSON object");
        // Jackson counts from the value's start: a place it names of its own would be wrong in the whole request.
        var unclosed = "{\"NodeNames\": [], \"Pod\": {\"spec\": {\"containers\": [}}}";
        assertThat(catchThrowableOfRead(unclosed)).isInstanceOf(WireFormatException.class)
                .hasMessageStartingWith("request body is not valid ExtenderArgs JSON at line 1, column " + (unclosed.indexOf("[}") + 2) + ": ")
                .hasMessageContaining("Unexpected close marker").hasMessageNotContaining("Source").hasMessageNotContaining("starting at");
    }

    private Throwable catchThrowableOfRead(String json) {
        return org.assertj.core.api.Assertions.catchThrowable(() -> reader.read(body(json)));
    }
}
