package io.hetgpu.gpu.tier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CardGenerationTest {

    private final CardCatalog catalog = CardCatalog.defaults();

    private String generationOf(String model) {
        int tier = catalog.cards().stream().filter(card -> card.model().equals(model)).findFirst().orElseThrow().rank();
        return CardGeneration.of(tier).name();
    }

    @Test
    void theBuiltInCardsFallIntoTheirArchitecturesWithTheT4AmongTheOlderTrainingCards() {
        assertThat(generationOf("H100")).isEqualTo("Hopper and later");
        assertThat(generationOf("H800")).isEqualTo("Hopper and later");
        assertThat(generationOf("B200")).isEqualTo("Hopper and later");
        assertThat(generationOf("A100")).isEqualTo("Ampere and Ada");
        assertThat(generationOf("L4")).isEqualTo("Ampere and Ada");
        assertThat(generationOf("A10")).isEqualTo("Ampere and Ada");
        assertThat(generationOf("V100")).isEqualTo("Volta");
        assertThat(generationOf("V100S")).isEqualTo("Volta");
        assertThat(generationOf("T4")).isEqualTo("older");
        assertThat(generationOf("P100")).isEqualTo("older");
        assertThat(generationOf("K80")).isEqualTo("older");
    }

    @Test
    void everyTierBelongsToExactlyOneGenerationAndAgeGrowsAsTiersFall() {
        int previousAge = 0;
        for (int tier = 200; tier >= -50; tier--) {
            int age = CardGeneration.age(tier);
            var generation = CardGeneration.NEWEST_FIRST.get(age);
            assertThat(tier).as("tier %d in %s", tier, generation).isBetween(generation.lowestTier(), generation.highestTier());
            int t = tier;
            long holding = CardGeneration.NEWEST_FIRST.stream().filter(g -> t >= g.lowestTier() && t <= g.highestTier()).count();
            assertThat(holding).as("generations holding tier %d", tier).isEqualTo(1);
            assertThat(age).isGreaterThanOrEqualTo(previousAge);
            previousAge = age;
        }
        assertThat(CardGeneration.age(Integer.MIN_VALUE)).isEqualTo(CardGeneration.NEWEST_FIRST.size() - 1);
        assertThat(CardGeneration.age(Integer.MAX_VALUE)).isZero();
    }

    @Test
    void aBandUpsideDownIsRefusedWithItsName() {
        assertThatThrownBy(() -> new CardGeneration("odd", 50, 40)).hasMessageContaining("odd").hasMessageContaining("50");
    }
}
