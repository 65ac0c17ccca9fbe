package io.hetgpu.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ExtenderConfigTest {

    @Test
    void readsEveryFieldOfAYamlFile() throws Exception {
        var config = ExtenderConfig.parse("""
                version: v1
                port: 9443
                resourceName: example.com/gpu
                events: {enabled: false}
                policy:
                  priority: {high: 500, low: 10}
                  weights: {tier: 8, cpu: 0}
                  tiers:
                    - {model: B300, rank: 110, computeCapability: "10.0", maxMemoryMiB: 294912}
                """, "test.yaml");
        assertThat(config.port()).isEqualTo(9443);
        assertThat(config.resourceName()).isEqualTo("example.com/gpu");
        assertThat(config.priority()).isEqualTo(new PriorityThresholds(500, 10));
        assertThat(config.weights()).isEqualTo(ScoreWeights.DEFAULTS.with("tier", 8).with("cpu", 0));
        assertThat(config.tiers()).singleElement().satisfies(card -> assertThat(card.rank()).isEqualTo(110));
        assertThat(config.events()).isFalse();
    }

    @Test
    void readsJsonToo() throws Exception {
        assertThat(ExtenderConfig.parse("{\"version\": \"v1\", \"port\": 8000}", "c.json").port()).isEqualTo(8000);
    }

    @Test
    void anEmptyFileIsTheDefaults() throws Exception {
        assertThat(ExtenderConfig.parse("", "c.yaml")).isEqualTo(ExtenderConfig.DEFAULTS);
        assertThat(ExtenderConfig.parse("version: v1\n", "c.yaml")).isEqualTo(ExtenderConfig.DEFAULTS);
    }

    @Test
    void eachBadFieldIsNamedWithItsPathAndValue() {
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {weights: {tier: lots}}", "c.yaml"))
                .hasMessage("c.yaml: policy.weights.tier: expected an integer, got \"lots\"");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {weights: {tier: 500}}", "c.yaml"))
                .hasMessage("c.yaml: policy.weights.tier: expected 0..100, got 500");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {weights: {nvlnk: 2}}", "c.yaml"))
                .hasMessage("c.yaml: policy.weights.nvlnk: no scorer of that name (scorers: cpu, data, job, nvlink, packing, tier), got 2");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {weights: {tier: 0, nvlink: 0, job: 0, data: 0, cpu: 0, packing: 0}}", "c.yaml"))
                .hasMessage("c.yaml: policy.weights: at least one weight must be above 0");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {priority: {high: 5, low: 9}}", "c.yaml"))
                .hasMessage("c.yaml: policy.priority: the low priority threshold (9) must be below the high one (5)");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {tiers: [{model: X1, rank: 3, computeCapability: new, maxMemoryMiB: 1}]}", "c.yaml"))
                .hasMessage("c.yaml: policy.tiers[0].computeCapability: expected MAJOR.MINOR such as \"9.0\", got \"new\"");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nport: 70000", "c.yaml")).hasMessage("c.yaml: port: expected 0..65535, got 70000");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nevents: {intervalSeconds: 0}", "c.yaml"))
                .hasMessage("c.yaml: events.intervalSeconds: expected at least 1, got 0");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nprot: 1", "c.yaml"))
                .hasMessageStartingWith("c.yaml: prot: unknown field (known: ").hasMessageContaining("port");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {reserve: 1}", "c.yaml"))
                .hasMessageStartingWith("c.yaml: policy.reserve: unknown field (known: ").hasMessageContaining("highPriorityReserve");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: [1, 2]", "c.yaml"))
                .hasMessage("c.yaml: policy: expected a mapping, got a list");
    }

    @Test
    void everyBadFieldIsReportedAtOnce() {
        assertThatThrownBy(() -> ExtenderConfig.parse("""
                version: v1
                port: 70000
                resourceName: "not a resource"
                colour: blue
                events: {intervalSeconds: soon}
                policy:
                  priority: {high: 5, low: 9}
                  weights: {tier: 500, nvlnk: 2}
                  highPriorityReserve: -2
                """, "c.yaml"))
                .hasMessageStartingWith("c.yaml: 8 invalid fields: ")
                .hasMessageContaining("port: expected 0..65535, got 70000")
                .hasMessageContaining("resourceName: expected a resource name such as nvidia.com/gpu, got \"not a resource\"")
                .hasMessageContaining("colour: unknown field")
                .hasMessageContaining("events.intervalSeconds: expected an integer, got \"soon\"")
                .hasMessageContaining("policy.priority: the low priority threshold (9) must be below the high one (5)")
                .hasMessageContaining("policy.weights.tier: expected 0..100, got 500")
                .hasMessageContaining("policy.weights.nvlnk: no scorer of that name")
                .hasMessageContaining("policy.highPriorityReserve: expected 0 or more GPUs, got -2")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    @Test
    void anUnversionedFileIsRefusedWithHowToWriteItNow() {
        assertThatThrownBy(() -> ExtenderConfig.parse("port: 8888\nweights: {tier: 4}\nhighPriorityReserve: 8\n", "c.yaml"))
                .hasMessage("c.yaml: version: missing. Write \"version: v1\" as the first line and put the policy settings"
                        + " (priority, weights, tiers, workloads, minimumSpeedShare, highPriorityReserve) under \"policy:\";"
                        + " this file has weights, highPriorityReserve at the top level;"
                        + " port, resourceName, rackLabel, bodyLimitBytes and events stay where they are");
    }

    @Test
    void anUnknownVersionNamesTheSupportedOnes() {
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v2\n", "c.yaml"))
                .hasMessage("c.yaml: version: expected one of v1, got \"v2\"");
    }

    @Test
    void flagsOverrideTheFile() throws Exception {
        var main = new ExtenderMain();
        new CommandLine(main).parseArgs("--port", "9999", "--priority-high", "2000", "--kubeconfig", "none");
        var settings = main.settings();
        assertThat(settings.port()).isEqualTo(9999);
        assertThat(settings.priority().high()).isEqualTo(2000);
    }

    @Test
    void tlsNeedsBothFiles() {
        var main = new ExtenderMain();
        new CommandLine(main).parseArgs("--tls-cert", "/tmp/cert.pem");
        assertThatThrownBy(main::settings).hasMessage("--tls-cert and --tls-key go together: give both or neither");
    }
}
