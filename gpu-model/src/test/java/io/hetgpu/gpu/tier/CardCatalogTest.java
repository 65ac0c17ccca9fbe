package io.hetgpu.gpu.tier;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.CardModel;
import io.hetgpu.gpu.ComputeCapability;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CardCatalogTest {

    private final CardCatalog catalog = CardCatalog.defaults();

    @Test
    void ranksGenerationsOldestToNewest() {
        var order = List.of("K80", "P100", "T4", "V100", "A100", "H100", "H200", "B200");
        var ranks = order.stream().map(model -> rank(model)).toList();

        assertThat(ranks).isSorted().doesNotHaveDuplicates();
        assertThat(rank("L4")).isLessThan(rank("L40S")).isLessThan(rank("A100"));
    }

    @Test
    void knownCardsAreNotEstimated() {
        var tier = catalog.tierOf("Tesla V100-SXM2-32GB", new ComputeCapability(7, 0), 32510);

        assertThat(tier.model()).isEqualTo("V100");
        assertThat(tier.estimated()).isFalse();
    }

    @Test
    void unknownCardRanksJustAboveTheBestCardItBeats() {
        var tier = catalog.tierOf("NVIDIA H20", new ComputeCapability(9, 0), 97_871);

        assertThat(tier.estimated()).isTrue();
        assertThat(tier.rank()).isEqualTo(rank("H100") + 1);
        assertThat(tier.basis()).contains("unknown product H20").contains("just above H100");
    }

    @Test
    void unknownCardThatBeatsNothingRanksLowest() {
        var tier = catalog.tierOf("Tesla K20m", new ComputeCapability(3, 5), 4_743);

        assertThat(tier.rank()).isEqualTo(1).isLessThan(rank("K80"));
        assertThat(tier.basis()).contains("ranked lowest");
    }

    @Test
    void overridesReplaceAndExtendTheTable() {
        var custom = catalog.withOverrides(List.of(
                new KnownCard("T4", 41, new ComputeCapability(7, 5), 16_384),
                new KnownCard("RTX-4090", 65, new ComputeCapability(8, 9), 24_576)));

        assertThat(custom.tierOf("T4", new ComputeCapability(7, 5), 15_360).rank()).isEqualTo(41).isGreaterThan(rank("V100"));
        assertThat(custom.tierOf("NVIDIA GeForce RTX 4090", new ComputeCapability(8, 9), 24_564).estimated()).isFalse();
        assertThat(catalog.tierOf("T4", new ComputeCapability(7, 5), 15_360).rank()).isEqualTo(rank("T4"));
    }

    @ParameterizedTest
    @CsvSource(textBlock = """
            Tesla K80,                  K80
            Tesla P100-SXM2-16GB,       P100
            Tesla V100-SXM2-16GB,       V100
            Tesla V100S-PCIE-32GB,      V100S
            Tesla T4,                   T4
            NVIDIA A100-SXM4-80GB,      A100
            NVIDIA A100 80GB PCIe,      A100
            NVIDIA A10,                 A10
            NVIDIA H100 80GB HBM3,      H100
            NVIDIA H100 PCIe,           H100
            NVIDIA H200,                H200
            NVIDIA L40S,                L40S
            NVIDIA L4,                  L4
            NVIDIA GeForce RTX 4090,    RTX-4090
            NVIDIA RTX A6000,           RTX-A6000
            a100,                       A100
            '  nvidia h100 ',           H100
            """)
    void normalisesProductNames(String product, String model) {
        assertThat(CardModel.fromProductName(product)).isEqualTo(model);
    }

    private int rank(String model) {
        return catalog.cards().stream().filter(card -> card.model().equals(model)).findFirst().orElseThrow().rank();
    }
}
