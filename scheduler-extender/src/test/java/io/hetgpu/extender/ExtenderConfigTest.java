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
    void theMetricsPortFlagWinsOverTheFileAndIsChecked() throws Exception {
        var file = java.nio.file.Files.createTempFile("extender", ".yaml");
        java.nio.file.Files.writeString(file, "version: v1\nmetricsPort: 9100\n");
        var main = new ExtenderMain();
        new CommandLine(main).parseArgs("--config", file.toString(), "--metrics-port", "8889");
        assertThat(main.settings().metricsPort()).isEqualTo(8889);

        var fromFile = new ExtenderMain();
        new CommandLine(fromFile).parseArgs("--config", file.toString());
        assertThat(fromFile.settings().metricsPort()).isEqualTo(9100);

        var outOfRange = new ExtenderMain();
        new CommandLine(outOfRange).parseArgs("--metrics-port", "70000");
        assertThatThrownBy(outOfRange::settings).hasMessage("--metrics-port: expected 0..65535 (0: none), got 70000");

        var samePort = new ExtenderMain();
        new CommandLine(samePort).parseArgs("--port", "8888", "--metrics-port", "8888");
        assertThatThrownBy(samePort::settings).hasMessage("--metrics-port: 8888 must differ from the verbs' port 8888");
    }

    @Test
    void aClientCaNeedsTheServersCertificateAndMustBeReadable() throws Exception {
        var noServerCertificate = new ExtenderMain();
        new CommandLine(noServerCertificate).parseArgs("--tls-client-ca", "/tmp/ca.pem");
        assertThatThrownBy(noServerCertificate::settings)
                .hasMessage("--tls-client-ca /tmp/ca.pem needs --tls-cert and --tls-key: client certificates are asked for in the TLS handshake");

        var readable = java.nio.file.Files.createTempFile("tls", ".pem");
        var missing = new ExtenderMain();
        new CommandLine(missing).parseArgs("--tls-cert", readable.toString(), "--tls-key", readable.toString(),
                "--tls-client-ca", "/nonexistent/ca.pem");
        assertThatThrownBy(missing::settings).hasMessage("--tls-client-ca: TLS file /nonexistent/ca.pem does not exist or cannot be read");
    }

    @Test
    void theStartUpLineNamesBothAddresses() {
        var options = new io.hetgpu.extender.http.ServerOptions("127.0.0.1", 8888, 1024, java.nio.file.Path.of("tls.crt"), java.nio.file.Path.of("tls.key"))
                .withTlsClientCa(java.nio.file.Path.of("ca.crt")).withMetrics("0.0.0.0", 8889);
        assertThat(ExtenderMain.listening(options, 8888, 8889)).isEqualTo("hetgpu scheduler extender listening on https://127.0.0.1:8888"
                + " (client certificates from ca.crt required), metrics and probes also on http://0.0.0.0:8889");
        var plain = new io.hetgpu.extender.http.ServerOptions("0.0.0.0", 8888, 1024, null, null);
        assertThat(ExtenderMain.listening(plain, 8888, io.hetgpu.extender.http.ServerOptions.NO_METRICS_PORT))
                .isEqualTo("hetgpu scheduler extender listening on http://0.0.0.0:8888");
    }

    @Test
    void tlsNeedsBothFiles() {
        var main = new ExtenderMain();
        new CommandLine(main).parseArgs("--tls-cert", "/tmp/cert.pem");
        assertThatThrownBy(main::settings).hasMessage("--tls-cert and --tls-key go together: give both or neither");
    }
}
