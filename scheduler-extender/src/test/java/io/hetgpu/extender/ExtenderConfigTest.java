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
    void aFileThatIsNotYamlIsOneLineSayingWhereAndWhy() {
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: [1\n", "extender.yaml"))
                .hasMessage("extender.yaml: line 2, column 11: not YAML or JSON: while parsing a flow sequence;"
                        + " expected ',' or ']', but got <stream end>");
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
    void trustedPriorityNamespacesAreReadAndEachBadOneIsNamedWithItsIndex() throws Exception {
        var config = ExtenderConfig.parse("version: v1\npolicy: {priority: {trustedNamespaces: [ml-platform, batch]}}", "c.yaml");
        assertThat(config.priority()).isEqualTo(new PriorityThresholds(1000, -1, java.util.Set.of("ml-platform", "batch")));
        assertThat(ExtenderConfig.DEFAULTS.priority().trustedNamespaces()).isEmpty();
        assertThat(ExtenderConfig.parse("version: v1\npolicy: {priority: {high: 2000}}", "c.yaml").priority().trustedNamespaces()).isEmpty();

        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {priority: {trustedNamespaces: [ml-platform, Team_A]}}", "c.yaml"))
                .hasMessage("c.yaml: policy.priority.trustedNamespaces[1]: expected a namespace name (1 to 63 lower-case letters, digits "
                        + "or '-', starting and ending with a letter or digit), got \"Team_A\"");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {priority: {trustedNamespaces: [batch, batch]}}", "c.yaml"))
                .hasMessage("c.yaml: policy.priority.trustedNamespaces[1]: given twice, got \"batch\"");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy: {priority: {trustedNamespaces: ml-platform}}", "c.yaml"))
                .hasMessage("c.yaml: policy.priority.trustedNamespaces: expected a list, got a string");
    }

    @Test
    void theCommandLineThresholdsKeepTheFilesTrustedNamespaces() throws Exception {
        var file = java.nio.file.Files.createTempFile("extender", ".yaml");
        try {
            java.nio.file.Files.writeString(file, "version: v1\npolicy: {priority: {trustedNamespaces: [ml-platform]}}");
            var main = new ExtenderMain();
            new CommandLine(main).parseArgs("--config", file.toString(), "--priority-high", "2000", "--kubeconfig", "none");
            assertThat(main.settings().priority()).isEqualTo(new PriorityThresholds(2000, -1, java.util.Set.of("ml-platform")));
        } finally {
            java.nio.file.Files.delete(file);
        }
    }

    @Test
    void learningIsOnByDefaultAndReadsItsBounds() throws Exception {
        assertThat(ExtenderConfig.DEFAULTS.learning()).isEqualTo(io.hetgpu.extender.throughput.LearningSettings.DEFAULTS);
        assertThat(ExtenderConfig.DEFAULTS.learning().enabled()).isTrue();
        var config = ExtenderConfig.parse("""
                version: v1
                policy:
                  learning: {enabled: true, minRunSeconds: 300, windowSize: 8, maxNamespaces: 4, maxClasses: 10,
                             outlierFactor: 3, outlierMinSamples: 2, maxNamespaceInfluence: 1.5, explore: false}
                """, "c.yaml");
        assertThat(config.learning()).isEqualTo(new io.hetgpu.extender.throughput.LearningSettings(true, 300, 8, 4, 10, 3, 2, 1.5, false));
        assertThat(ExtenderConfig.parse("version: v1\npolicy: {learning: {enabled: false}}\n", "c.yaml").learning())
                .isEqualTo(io.hetgpu.extender.throughput.LearningSettings.OFF);
    }

    @Test
    void everyBadLearningFieldIsReportedAtOnce() {
        assertThatThrownBy(() -> ExtenderConfig.parse("""
                version: v1
                policy:
                  learning: {minRunSeconds: -1, windowSize: 0, maxClasses: 100000, outlierFactor: 1, maxNamespaceInfluence: 0.5,
                             enabled: maybe, colour: red}
                """, "c.yaml"))
                .hasMessageContaining("policy.learning.minRunSeconds: expected from 0 to 2592000 (30 days), got -1.0")
                .hasMessageContaining("policy.learning.windowSize: expected from 1 to 1024, got 0")
                .hasMessageContaining("policy.learning.maxClasses: expected from 1 to 4096, got 100000")
                .hasMessageContaining("policy.learning.outlierFactor: expected above 1 and at most 1000, got 1.0")
                .hasMessageContaining("policy.learning.maxNamespaceInfluence: expected from 1 to 1000, got 0.5")
                .hasMessageContaining("policy.learning.enabled")
                .hasMessageContaining("policy.learning.colour: unknown field");
    }

    @Test
    void withLearningOnAnyWorkloadClassIsAcceptedAndOffTheTableListsThem() throws Exception {
        var table = "version: v1\npolicy: {workloads: {resnet50: {V100: 18}}, learning: {enabled: %s}}\n";
        var pod = KubeJson.trainingPod();
        pod.getMetadata().getAnnotations().put("hetgpu.io/workload", "bert");
        var learning = ExtenderSetup.of(ExtenderConfig.parse(table.formatted("true"), "c.yaml"));
        assertThat(learning.learner()).isPresent();
        assertThat(learning.parser().parse(pod).workload()).isEqualTo("bert");
        var fixed = ExtenderSetup.of(ExtenderConfig.parse(table.formatted("false"), "c.yaml"));
        assertThat(fixed.learner()).isEmpty();
        assertThatThrownBy(() -> fixed.parser().parse(pod)).hasMessageContaining("unknown workload class \"bert\"");
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
                .hasMessageContaining("resourceName: expected an extended resource name such as nvidia.com/gpu (a domain, '/', a name), got \"not a resource\"")
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
    void theEventLoopPollFlagIsChecked() throws Exception {
        var tooLong = new ExtenderMain();
        new CommandLine(tooLong).parseArgs("--event-loop-poll-us", "20000");
        assertThatThrownBy(tooLong::settings).hasMessage("--event-loop-poll-us: expected 0..10000 (microseconds), got 20000");

        var negative = new ExtenderMain();
        new CommandLine(negative).parseArgs("--event-loop-poll-us", "-5");
        assertThatThrownBy(negative::settings).hasMessage("--event-loop-poll-us: expected 0..10000 (microseconds), got -5");

        var off = new ExtenderMain();
        new CommandLine(off).parseArgs("--event-loop-poll-us", "0");
        assertThat(off.settings()).isNotNull();
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
                + " (client certificates from ca.crt required), metrics and probes also on http://0.0.0.0:8889"
                + "; event loops poll 100 microseconds after an answer before they sleep");
        var plain = new io.hetgpu.extender.http.ServerOptions("0.0.0.0", 8888, 1024, null, null).withEventLoopPoll(java.time.Duration.ZERO);
        assertThat(ExtenderMain.listening(plain, 8888, io.hetgpu.extender.http.ServerOptions.NO_METRICS_PORT))
                .isEqualTo("hetgpu scheduler extender listening on http://0.0.0.0:8888");
    }

    @Test
    void tlsNeedsBothFiles() {
        var main = new ExtenderMain();
        new CommandLine(main).parseArgs("--tls-cert", "/tmp/cert.pem");
        assertThatThrownBy(main::settings).hasMessage("--tls-cert and --tls-key go together: give both or neither");
    }

    @Test
    void aKeyGivenTwiceIsRefusedNamingItsPath() {
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nport: 8888\nport: 9999\n", "c.yaml"))
                .hasMessage("c.yaml: port: given twice (each key once per mapping)");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\npolicy:\n  weights: {tier: 4, tier: 5}\n", "c.yaml"))
                .hasMessage("c.yaml: policy.weights.tier: given twice (each key once per mapping)");
        assertThatThrownBy(() -> ExtenderConfig.parse("{\"version\": \"v1\", \"events\": {\"enabled\": true, \"enabled\": false}}", "c.json"))
                .hasMessage("c.json: events.enabled: given twice (each key once per mapping)");
    }

    @Test
    void aFractionIsRefusedWhereAWholeNumberIsExpectedNotTruncated() {
        assertThatThrownBy(() -> ExtenderConfig.parse("""
                version: v1
                port: 18103.9
                bodyLimitBytes: 1048576.5
                metricsPort: 9090.1
                events: {intervalSeconds: 1.5}
                policy:
                  priority: {high: 1000.5}
                  weights: {tier: 2.5}
                  highPriorityReserve: 8.5
                """, "c.yaml"))
                .hasMessageStartingWith("c.yaml: 7 invalid fields: ")
                .hasMessageContaining("port: expected an integer, got 18103.9")
                .hasMessageContaining("bodyLimitBytes: expected an integer, got 1048576.5")
                .hasMessageContaining("metricsPort: expected an integer, got 9090.1")
                .hasMessageContaining("events.intervalSeconds: expected an integer, got 1.5")
                .hasMessageContaining("policy.priority.high: expected an integer, got 1000.5")
                .hasMessageContaining("policy.weights.tier: expected an integer, got 2.5")
                .hasMessageContaining("policy.highPriorityReserve: expected an integer, got 8.5");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nport: 99999999999\n", "c.yaml"))
                .hasMessage("c.yaml: port: expected an integer of at most 2147483647, got 99999999999");
    }

    @Test
    void theRackLabelIsALabelKey() throws Exception {
        assertThat(ExtenderConfig.parse("version: v1\nrackLabel: example.com/rack\n", "c.yaml").rackLabel()).isEqualTo("example.com/rack");
        assertThat(ExtenderConfig.parse("version: v1\nrackLabel: rack\n", "c.yaml").rackLabel()).isEqualTo("rack");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nrackLabel: \"Example.com/rack\"\n", "c.yaml"))
                .hasMessage("c.yaml: rackLabel: expected a label key such as topology.hetgpu.io/rack: the part before '/' must be a DNS "
                        + "subdomain (lower-case letters, digits, '-' and '.', at most 253 characters), got \"Example.com/rack\"");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nrackLabel: \"rack/\"\n", "c.yaml"))
                .hasMessageContaining("rackLabel: expected a label key");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nrackLabel: \"\"\n", "c.yaml"))
                .hasMessageContaining("rackLabel: expected a label key");
    }

    @Test
    void theBodyLimitHasBounds() throws Exception {
        assertThat(ExtenderConfig.parse("version: v1\nbodyLimitBytes: 1073741824\n", "c.yaml").bodyLimitBytes()).isEqualTo(1L << 30);
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nbodyLimitBytes: 1073741825\n", "c.yaml"))
                .hasMessageStartingWith("c.yaml: bodyLimitBytes: expected 1024 to 1073741824 (1 GiB").hasMessageEndingWith("got 1073741825");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nbodyLimitBytes: 1023\n", "c.yaml"))
                .hasMessageStartingWith("c.yaml: bodyLimitBytes: expected 1024 to");
    }

    @Test
    void theResourceNameFlagIsCheckedLikeTheFile() {
        var main = new ExtenderMain();
        new CommandLine(main).parseArgs("--resource-name", "gpu", "--kubeconfig", "none");
        assertThatThrownBy(main::settings).hasMessage("--resource-name: expected an extended resource name such as nvidia.com/gpu "
                + "(a domain, '/', a name), got \"gpu\"");
    }

    @Test
    void readsMetricsPortSchedulerNamesAndHttpTimeout() throws Exception {
        var config = ExtenderConfig.parse("""
                version: v1
                metricsPort: 8889
                schedulerNames: [hetgpu-scheduler, gpu-batch]
                httpTimeout: 45s
                """, "c.yaml");
        assertThat(config.metricsPort()).isEqualTo(8889);
        assertThat(config.schedulerNames()).containsExactly("hetgpu-scheduler", "gpu-batch");
        assertThat(config.httpTimeout()).isEqualTo(java.time.Duration.ofSeconds(45));
        assertThat(ExtenderConfig.DEFAULTS.metricsPort()).isZero();
        assertThat(ExtenderConfig.DEFAULTS.schedulerNames()).containsExactly("hetgpu-scheduler");
        assertThat(ExtenderConfig.DEFAULTS.httpTimeout()).isEqualTo(java.time.Duration.ofSeconds(5));
    }

    @Test
    void httpTimeoutIsAGoDurationAboveZeroAndAtMostAMinute() throws Exception {
        assertThat(ExtenderConfig.parse("version: v1\nhttpTimeout: 5s\n", "c.yaml").httpTimeout()).isEqualTo(java.time.Duration.ofSeconds(5));
        assertThat(ExtenderConfig.parse("version: v1\nhttpTimeout: 1500ms\n", "c.yaml").httpTimeout()).isEqualTo(java.time.Duration.ofMillis(1500));
        assertThat(ExtenderConfig.parse("version: v1\nhttpTimeout: 1m\n", "c.yaml").httpTimeout()).isEqualTo(java.time.Duration.ofMinutes(1));
        assertThat(ExtenderConfig.goDuration("1m30s")).as("read as Go reads it, then refused as too long")
                .isEqualTo(java.time.Duration.ofSeconds(90));
        for (var bad : new String[] {"0s", "5", "90s", "1m30s", "abc", "1m1s", "-5s", "5 s", ""}) {
            assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nhttpTimeout: \"" + bad + "\"\n", "c.yaml")).as(bad)
                    .hasMessageStartingWith("c.yaml: httpTimeout: expected a duration above 0 and at most 60s")
                    .hasMessageEndingWith("got \"" + bad + "\"");
        }
    }

    @Test
    void jobPlanDeadlineOutlivesABindAndIsAtMostTenMinutes() throws Exception {
        assertThat(ExtenderConfig.DEFAULTS.jobPlanDeadline()).isEqualTo(java.time.Duration.ofSeconds(60));
        assertThat(ExtenderConfig.parse("version: v1\njobPlanDeadline: 2m\n", "c.yaml").jobPlanDeadline()).isEqualTo(java.time.Duration.ofMinutes(2));
        assertThat(ExtenderConfig.parse("version: v1\nhttpTimeout: 2s\njobPlanDeadline: 3s\n", "c.yaml").jobPlanDeadline())
                .isEqualTo(java.time.Duration.ofSeconds(3));
        for (var bad : new String[] {"5s", "1s", "11m", "abc", "-60s"}) {
            assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\njobPlanDeadline: \"" + bad + "\"\n", "c.yaml")).as(bad)
                    .hasMessageStartingWith("c.yaml: jobPlanDeadline: expected a duration above httpTimeout (5000ms) and at most 10m")
                    .hasMessageEndingWith("got \"" + bad + "\"");
        }
    }

    @Test
    void maxJobPodsBoundsTheJobsPlannedWhole() throws Exception {
        assertThat(ExtenderConfig.DEFAULTS.maxJobPods()).isEqualTo(4096);
        assertThat(ExtenderConfig.parse("version: v1\nmaxJobPods: 512\n", "c.yaml").maxJobPods()).isEqualTo(512);
        for (var bad : new String[] {"1", "0", "-3", "65537"}) {
            assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nmaxJobPods: " + bad + "\n", "c.yaml")).as(bad)
                    .hasMessage("c.yaml: maxJobPods: expected 2 to 65536: the most pods a job may have to be planned whole "
                            + "(a plan's time and memory grow with them), got " + bad);
        }
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nmaxJobPods: 1000.5\n", "c.yaml")).hasMessageContaining("maxJobPods");
    }

    @Test
    void recordKeySecretIsASecretName() throws Exception {
        assertThat(ExtenderConfig.DEFAULTS.recordKeySecret()).isEqualTo("hetgpu-record-key");
        assertThat(ExtenderConfig.parse("version: v1\nrecordKeySecret: team-a.record-key\n", "c.yaml").recordKeySecret())
                .isEqualTo("team-a.record-key");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nrecordKeySecret: Record_Key\n", "c.yaml"))
                .hasMessage("c.yaml: recordKeySecret: expected a Secret name: lower-case letters, digits, '-' and '.', starting and "
                        + "ending with a letter or digit, at most 253 characters, got \"Record_Key\"");
    }

    @Test
    void schedulerNamesAreNotBlankNotRepeatedAndNotNone() {
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nschedulerNames: [a, a]\n", "c.yaml"))
                .hasMessage("c.yaml: schedulerNames[1]: given twice, got \"a\"");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nschedulerNames: [a, \" \"]\n", "c.yaml"))
                .hasMessage("c.yaml: schedulerNames[1]: expected a scheduler name, got \" \"");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nschedulerNames: []\n", "c.yaml"))
                .hasMessage("c.yaml: schedulerNames: expected at least one scheduler name, got []");
    }

    @Test
    void metricsPortIsAPortOtherThanTheVerbs() {
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nmetricsPort: 70000\n", "c.yaml"))
                .hasMessage("c.yaml: metricsPort: expected 0..65535 (0: no metrics port), got 70000");
        assertThatThrownBy(() -> ExtenderConfig.parse("version: v1\nport: 9000\nmetricsPort: 9000\n", "c.yaml"))
                .hasMessage("c.yaml: metricsPort: must differ from port, got 9000");
    }
}
