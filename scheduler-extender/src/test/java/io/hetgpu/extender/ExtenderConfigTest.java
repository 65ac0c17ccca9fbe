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
                port: 9443
                resourceName: example.com/gpu
                priority: {high: 500, low: 10}
                weights: {tier: 8, cpu: 0}
                tiers:
                  - {model: B300, rank: 110, computeCapability: "10.0", maxMemoryMiB: 294912}
                events: {enabled: false}
                """, "test.yaml");
        assertThat(config.port()).isEqualTo(9443);
        assertThat(config.resourceName()).isEqualTo("example.com/gpu");
        assertThat(config.priority()).isEqualTo(new PriorityThresholds(500, 10));
        assertThat(config.weights()).isEqualTo(new ScoreWeights(8, 3, 3, 2, 0));
        assertThat(config.tiers()).singleElement().satisfies(card -> assertThat(card.rank()).isEqualTo(110));
        assertThat(config.events()).isFalse();
    }

    @Test
    void readsJsonToo() throws Exception {
        assertThat(ExtenderConfig.parse("{\"port\": 8000}", "c.json").port()).isEqualTo(8000);
    }

    @Test
    void badValuesGetOneLineNamingFieldAndValue() {
        assertThatThrownBy(() -> ExtenderConfig.parse("weights: {tier: lots}", "c.yaml"))
                .hasMessage("c.yaml: weights.tier: expected an integer, got \"lots\"");
        assertThatThrownBy(() -> ExtenderConfig.parse("weights: {tier: 500}", "c.yaml"))
                .hasMessage("c.yaml: weights.tier: expected 0..100, got 500");
        assertThatThrownBy(() -> ExtenderConfig.parse("priority: {high: 5, low: 9}", "c.yaml"))
                .hasMessage("c.yaml: priority: the low priority threshold (9) must be below the high one (5)");
        assertThatThrownBy(() -> ExtenderConfig.parse("tiers: [{model: X1, rank: 3, computeCapability: new, maxMemoryMiB: 1}]", "c.yaml"))
                .hasMessage("c.yaml: tiers[0].computeCapability: expected MAJOR.MINOR such as \"9.0\", got \"new\"");
        assertThatThrownBy(() -> ExtenderConfig.parse("prot: 1", "c.yaml")).hasMessageStartingWith("c.yaml: unknown field prot (known: ");
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
