package io.hetgpu.testcluster.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The alert rules that ship (manifests/monitoring/, as kubectl renders them) are a rule file Prometheus loads, checked
 * by Prometheus's own promtool (Debian's prometheus package); promtool's unit tests show alerts firing on the series
 * that mean trouble; every alert has its runbook section in docs/monitoring.md; every dashboard panel queries.
 */
class MonitoringRulesTest {

    static final ExternalTool PROMTOOL = new ExternalTool("promtool", "the monitoring tests check the alert rules with it: "
            + "install Debian's prometheus package (`apt-get install -y --no-install-recommends prometheus`); `./hetgpu test` and "
            + ".ci/run install it when it is missing");
    private static final Path RUNBOOK = Path.of("..", "docs", "monitoring.md");

    @TempDir
    Path dir;

    @Test
    void promtoolLoadsTheRuleFile() throws IOException {
        var rules = writeRules();
        var check = PROMTOOL.run(List.of("check", "rules", rules.toString()), 60);

        assertThat(check.exitCode()).as(check.stdout() + check.stderr()).isZero();
        assertThat(check.stdout()).contains("SUCCESS: " + MonitoringQueries.alertRules().size() + " rules found");
    }

    @Test
    void promtoolsUnitTestsOfTheAlertsPass() throws IOException {
        writeRules();
        var tests = dir.resolve("alerts-test.yaml");
        try (InputStream in = getClass().getResourceAsStream("/monitoring/alerts-test.yaml")) {
            Files.copy(in, tests);
        }
        var run = PROMTOOL.run(List.of("test", "rules", tests.toString()), 60);

        assertThat(run.exitCode()).as(run.stdout() + run.stderr()).isZero();
        assertThat(run.stdout()).contains("SUCCESS");
    }

    @Test
    void everyAlertHasItsRunbookSection() throws IOException {
        var runbook = Files.readString(RUNBOOK);
        var alerts = MonitoringQueries.alertRules();
        assertThat(alerts).hasSizeGreaterThanOrEqualTo(8).allSatisfy(rule -> {
            String name = rule.path("alert").asText();
            assertThat(runbook).as("docs/monitoring.md has a section for %s", name).contains("\n### " + name + "\n");
            assertThat(rule.path("annotations").path("runbook").asText()).as(name)
                    .isEqualTo("docs/monitoring.md#" + name.toLowerCase(java.util.Locale.ROOT));
            assertThat(rule.path("labels").path("severity").asText()).as(name).isIn("critical", "warning");
        });
    }

    @Test
    void everyPanelOfTheDashboardQueriesPrometheus() {
        var panels = MonitoringQueries.dashboard().path("panels");
        assertThat(panels.size()).isGreaterThanOrEqualTo(6);
        for (JsonNode panel : panels) {
            assertThat(panel.path("targets").size()).as(panel.path("title").asText()).isPositive();
            assertThat(panel.path("datasource").path("uid").asText()).as("the dashboard's data source variable").isEqualTo("${datasource}");
        }
    }

    /** The PrometheusRule's spec: the rule file the Prometheus Operator hands Prometheus. */
    private Path writeRules() throws IOException {
        var rules = dir.resolve("rules.yaml");
        Files.writeString(rules, new YAMLMapper().writeValueAsString(MonitoringQueries.prometheusRule().path("spec")));
        return rules;
    }
}
