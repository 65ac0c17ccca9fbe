package io.hetgpu.testcluster.explain;

import com.fasterxml.jackson.core.JsonFactoryBuilder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hetgpu.gpu.Quote;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * An explain report for tools ({@code --output json}), in a shape kept stable: {@code docs/reference.md} documents each
 * field, and every pod object has every key, {@code null} where it does not apply, so that a tool reads one shape.
 * {@code version} changes when a field changes meaning or goes away (fields may be added within a version).
 */
public final class ExplainJson {

    static final String KIND = "HetgpuExplanation";
    static final int VERSION = 1;
    private static final ObjectMapper JSON = new ObjectMapper(new JsonFactoryBuilder().characterEscapes(new Printable()).build())
            .enable(SerializationFeature.INDENT_OUTPUT);

    /**
     * JSON escapes C0 controls itself; DEL, C1 controls, line separators and bidirectional controls it leaves as they are,
     * and a tool's output often ends on a terminal. Escaped as {@code \}{@code uHHHH}, they read back as the same values.
     */
    private static final class Printable extends CharacterEscapes {
        private final int[] ascii = standardAsciiEscapesForJSON();

        Printable() {
            ascii[0x7f] = ESCAPE_STANDARD;
        }

        @Override
        public int[] getEscapeCodesForAscii() {
            return ascii;
        }

        @Override
        public SerializableString getEscapeSequence(int ch) {
            return Quote.isEscaped(ch) ? new SerializedString(String.format("\\u%04x", ch)) : null;
        }
    }

    private ExplainJson() {
    }

    /** Text of a JSON tree as every hetgpu tool writes it: indented, with what a terminal would act on escaped; a newline at the end. */
    public static String printable(com.fasterxml.jackson.databind.JsonNode root) {
        try {
            return JSON.writeValueAsString(root) + "\n";
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String render(ExplainReport report) {
        var root = JSON.createObjectNode();
        root.put("kind", KIND);
        root.put("version", VERSION);
        root.put("cluster", report.cluster());
        root.put("configuration", report.configuration());
        root.put("scheduler", report.scheduler());
        root.put("extenderWeight", report.weight());
        root.put("nodes", report.nodes());
        strings(root.putArray("notes"), report.notes());
        var pods = root.putArray("pods");
        report.pods().forEach(pod -> pod(pods.addObject(), pod));
        return printable(root);
    }

    private static void pod(ObjectNode json, PodExplanation pod) {
        json.put("namespace", pod.namespace());
        json.put("name", pod.name());
        json.put("workload", pod.workload());
        if (pod.job() == null) {
            json.putNull("job");
        } else {
            var job = json.putObject("job");
            job.put("key", pod.job().key());
            if (pod.job().members() > 0) {
                job.put("members", pod.job().members());
            } else {
                job.putNull("members");
            }
            job.put("sizeUnknown", pod.job().sizeUnknown());
            job.put("whole", pod.job().whole());
        }
        json.put("outcome", pod.outcome().word());
        String node = null;
        List<String> gpus = List.of();
        String cards = null;
        List<String> tied = List.of();
        boolean seated = false;
        List<String> victims = List.of();
        String message = null;
        switch (pod.outcome()) {
            case PodExplanation.Placed placed -> {
                node = placed.node();
                gpus = placed.devices();
                cards = placed.cards();
                tied = placed.tiedWith();
                seated = placed.seated();
            }
            case PodExplanation.Nominated nominated -> {
                node = nominated.node();
                victims = nominated.victims();
            }
            case PodExplanation.Pending pending -> message = pending.message();
            case PodExplanation.Failed failed -> message = failed.error();
            case PodExplanation.Refused refused -> message = refused.reason();
            case PodExplanation.NotForHetgpu other -> message = "spec.schedulerName is " + other.schedulerName();
            case PodExplanation.AlreadyBound bound -> node = bound.node();
        }
        json.put("node", node);
        strings(json.putArray("gpus"), gpus);
        json.put("cards", cards);
        strings(json.putArray("tiedWith"), tied);
        json.put("seated", seated);
        strings(json.putArray("victims"), victims);
        json.put("message", message);
        var ranking = json.putArray("ranking");
        for (var rank : pod.ranking()) {
            var row = ranking.addObject();
            row.put("node", rank.node());
            row.put("total", rank.total());
            row.put("hetgpu", rank.extender());
            row.put("kubeScheduler", rank.kubeScheduler());
            row.put("offer", rank.offer());
            row.put("behind", rank.behind());
        }
        var refusals = json.putArray("refusals");
        for (var refusal : pod.refusals()) {
            var row = refusals.addObject();
            row.put("reason", refusal.reason());
            strings(row.putArray("nodes"), refusal.nodes());
            row.put("unresolvable", refusal.unresolvable());
        }
        strings(json.putArray("changes"), pod.changes());
    }

    private static void strings(ArrayNode array, List<String> values) {
        values.forEach(array::add);
    }
}
