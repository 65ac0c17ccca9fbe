package io.hetgpu.gpu.tier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.gpu.ComputeCapability;
import org.junit.jupiter.api.Test;

class TierTableFileTest {

    @Test
    void readsTheTiersOfAFileWithOtherKeys() {
        var cards = TierTableFile.read("""
                version: v1
                port: 8888
                policy:
                  weights: {tier: 4}
                  tiers:
                    - {model: L40S, rank: 65, computeCapability: "8.9", maxMemoryMiB: 46068}
                """, "extender.yaml");

        assertThat(cards).containsExactly(new KnownCard("L40S", 65, new ComputeCapability(8, 9), 46068));
        assertThat(CardCatalog.defaults().withOverrides(cards).tierOf("NVIDIA L40S", new ComputeCapability(8, 9), 46068).rank()).isEqualTo(65);
    }

    @Test
    void noTiersIsNoOverride() {
        assertThat(TierTableFile.read("version: v1\nport: 8888\n", "extender.yaml")).isEmpty();
        assertThat(TierTableFile.read("version: v1\npolicy: {highPriorityReserve: 8}\n", "extender.yaml")).isEmpty();
        assertThat(TierTableFile.read("", "extender.yaml")).isEmpty();
    }

    @Test
    void aFileThatIsNotYamlIsOneLineSayingWhereAndWhy() {
        assertThatThrownBy(() -> TierTableFile.read("version: v1\npolicy: [1\n", "tiers.yaml"))
                .hasMessage("tiers.yaml: line 2, column 11: not YAML or JSON: while parsing a flow sequence;"
                        + " expected ',' or ']', but got <stream end>");
    }

    @Test
    void namesTheBadField() {
        var v1 = "version: v1\npolicy:\n  tiers:";
        assertThatThrownBy(() -> TierTableFile.read(v1 + "\n  - {model: X, rank: high, computeCapability: '9.0', maxMemoryMiB: 1}\n", "f.yaml"))
                .hasMessage("f.yaml: policy.tiers[0].rank: expected a whole number >= 1, got \"high\"");
        assertThatThrownBy(() -> TierTableFile.read(v1 + "\n  - {model: X, rank: 3, computeCapability: nine, maxMemoryMiB: 1}\n", "f.yaml"))
                .hasMessage("f.yaml: policy.tiers[0].computeCapability: expected MAJOR.MINOR such as \"9.0\", got \"nine\"");
        assertThatThrownBy(() -> TierTableFile.read(v1 + "\n  - {rank: 3}\n", "f.yaml")).hasMessage("f.yaml: policy.tiers[0].model: missing");
        assertThatThrownBy(() -> TierTableFile.read(v1 + " L40S\n", "f.yaml")).hasMessage("f.yaml: policy.tiers: expected a list, got \"L40S\"");
    }

    @Test
    void anUnversionedTableSaysHowToWriteItNow() {
        assertThatThrownBy(() -> TierTableFile.read("tiers:\n  - {model: X, rank: 3, computeCapability: '9.0', maxMemoryMiB: 1}\n", "f.yaml"))
                .hasMessageContaining("f.yaml: tiers: at the top level is the unversioned form")
                .hasMessageContaining("version: v1").hasMessageContaining("under \"policy:\"");
    }
}
