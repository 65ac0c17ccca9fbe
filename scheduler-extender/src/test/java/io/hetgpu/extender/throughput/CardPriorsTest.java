package io.hetgpu.extender.throughput;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.tier.KnownCard;
import java.util.Map;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

class CardPriorsTest {

    @Test
    void everyCatalogCardHasAPriorAndThePriorsFollowTheCatalogsTierOrder() {
        var cards = CardCatalog.defaults().cards();
        assertThat(CardPriors.models()).containsExactlyInAnyOrderElementsOf(cards.stream().map(KnownCard::model).toList());
        double previous = 0;
        for (var card : cards) {
            double speed = CardPriors.relativeSpeed(card.model()).orElseThrow();
            assertThat(speed).as("%s (rank %d) is no slower than the card ranked below it", card.model(), card.rank())
                    .isGreaterThanOrEqualTo(previous);
            previous = speed;
        }
    }

    @Test
    void aCardsPriorIsTheClassesSpeedElsewhereTimesTheRatioOfTheCards() {
        assertThat(CardPriors.extrapolate(Map.of("V100", 10.0), "A100")).isCloseTo(25, Offset.offset(1e-9));
        // From two cards: the geometric mean of what each says (K80 says 20 / 0.15 * 2.5, V100 says 2 * 2.5).
        assertThat(CardPriors.extrapolate(Map.of("K80", 20.0, "V100", 2.0), "A100"))
                .isCloseTo(Math.sqrt(20 / 0.15 * 2.5 * 2 * 2.5), Offset.offset(1e-9));
        assertThat(CardPriors.extrapolate(Map.of("V100", 10.0), "B300")).as("no prior for an unknown card").isNaN();
        assertThat(CardPriors.extrapolate(Map.of("B300", 10.0), "V100")).as("nothing known to extrapolate from").isNaN();
        assertThat(CardPriors.relativeSpeed("NVIDIA A100-SXM4-80GB")).hasValue(2.5);
    }
}
