package io.hetgpu.testcluster.throughputs;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.hetgpu.testcluster.explain.ExplainJson;
import java.util.TreeSet;

/**
 * A throughputs report for tools ({@code -o json}), one shape whatever it holds: {@code docs/reference.md} documents
 * each field; {@code version} changes when a field changes meaning or goes (fields may be added within a version).
 * Every card with a figure is listed, priors for cards the cluster lacks included.
 */
final class ThroughputsJson {

    static final String KIND = "HetgpuThroughputs";
    static final int VERSION = 1;

    private ThroughputsJson() {
    }

    static String render(ThroughputReport report) {
        var root = JsonNodeFactory.instance.objectNode();
        root.put("kind", KIND);
        root.put("version", VERSION);
        root.put("cluster", report.cluster());
        root.put("configMap", report.configMap());
        root.put("found", report.found());
        if (report.clusterCards() == null) {
            root.putNull("clusterCards");
        } else {
            var cards = root.putArray("clusterCards");
            new TreeSet<>(report.clusterCards()).forEach(cards::add);
        }
        var notes = root.putArray("notes");
        report.notes().forEach(notes::add);
        var classes = root.putArray("classes");
        for (var workload : report.classes()) {
            var json = classes.addObject();
            json.put("class", workload.workloadClass());
            json.put("fastest", workload.fastest());
            json.put("samples", workload.samples());
            var cards = json.putArray("cards");
            for (var card : workload.cards()) {
                var row = cards.addObject();
                row.put("card", card.card());
                row.put("perGpu", card.perGpu());
                row.put("samples", card.samples());
                if (card.prior()) {
                    row.putNull("podGpus");
                } else {
                    row.put("podGpus", card.podGpus());
                }
                row.put("prior", card.prior());
                row.put("ofBest", card.ofBest());
                if (card.onCluster() == null) {
                    row.putNull("onCluster");
                } else {
                    row.put("onCluster", card.onCluster());
                }
            }
        }
        return ExplainJson.printable(root);
    }
}
