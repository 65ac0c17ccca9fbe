package io.hetgpu.testcluster.manifests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The PromQL that ships in manifests/monitoring/ as {@code kubectl kustomize} renders it: every alert's expression
 * (the PrometheusRule) and every panel's queries (the Grafana dashboard's ConfigMap).
 */
public final class MonitoringQueries {

    static final Path MONITORING = ManifestTree.ROOT.resolve("monitoring");
    static final String DASHBOARD_CONFIG_MAP = "hetgpu-grafana-dashboard";
    static final String DASHBOARD_KEY = "hetgpu-dashboard.json";

    /** One expression and where it ships: "alert HetgpuExtenderDown" or "panel Free GPUs per tier". */
    public record Query(String source, String expr) {
    }

    private MonitoringQueries() {
    }

    public static List<Query> all() {
        var queries = new ArrayList<Query>();
        for (var rule : alertRules()) {
            queries.add(new Query("alert " + rule.path("alert").asText(), rule.path("expr").asText()));
        }
        for (var panel : dashboard().path("panels")) {
            for (var target : panel.path("targets")) {
                queries.add(new Query("panel " + panel.path("title").asText(), target.path("expr").asText()));
            }
        }
        return queries;
    }

    /** The PrometheusRule's rules, each with alert, expr, for, labels and annotations. */
    static List<JsonNode> alertRules() {
        var rules = new ArrayList<JsonNode>();
        for (var group : prometheusRule().path("spec").path("groups")) {
            group.path("rules").forEach(rules::add);
        }
        return rules;
    }

    /** The PrometheusRule as rendered: its spec is the rule file Prometheus loads. */
    static JsonNode prometheusRule() {
        return rendering().documents().stream().filter(d -> d.object().getKind().equals("PrometheusRule")).findFirst()
                .orElseThrow(() -> new AssertionError(MONITORING + " renders no PrometheusRule")).source();
    }

    static JsonNode dashboard() {
        try {
            return new ObjectMapper().readTree(rendering().one(ConfigMap.class, DASHBOARD_CONFIG_MAP).getData().get(DASHBOARD_KEY));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Rendering rendering() {
        return Kubectl.kustomize(MONITORING);
    }
}
