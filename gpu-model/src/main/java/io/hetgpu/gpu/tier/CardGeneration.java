package io.hetgpu.gpu.tier;

import java.util.List;

/**
 * A generation of training cards: a band of tiers. For a pod of several GPUs on nodes of a DRA driver the generation is
 * chosen before the NVLink set, and the set before the tier within the generation, both by hetgpu's DRA claims (which
 * list one alternative per generation, first on one set and then without one) and by the extender's scorers. A pod on
 * newer cards it does not need takes them from urgent work however well they are linked; within one generation the
 * better-linked set wins.
 *
 * <p>The bands are fixed tier ranges, not card names, so an admin's tier overrides move a card between them as its tier
 * says; a tier below the oldest band's lowest still belongs to it.
 *
 * @param name        for explanations: "Hopper and later"
 * @param lowestTier  the band's lowest tier, included ({@link Integer#MIN_VALUE} for the oldest band)
 * @param highestTier the band's highest tier, included ({@link Integer#MAX_VALUE} for the newest band)
 */
public record CardGeneration(String name, int lowestTier, int highestTier) {

    /**
     * Newest first: Hopper and later (84 up: H800, H100, H200, GH200, B200); Ampere and Ada (45-83: A10, L4, A30, A40,
     * L40, L40S, A100); Volta (40-44: V100, V100S); older (up to 39: K80, M60, M40, P4, P40, P100, and T4, an inference
     * card that trains slower than a V100).
     */
    public static final List<CardGeneration> NEWEST_FIRST = List.of(
            new CardGeneration("Hopper and later", 84, Integer.MAX_VALUE),
            new CardGeneration("Ampere and Ada", 45, 83),
            new CardGeneration("Volta", 40, 44),
            new CardGeneration("older", Integer.MIN_VALUE, 39));

    public CardGeneration {
        if (lowestTier > highestTier) {
            throw new IllegalArgumentException("generation " + name + ": lowest tier " + lowestTier + " above highest " + highestTier);
        }
    }

    /** How many generations are newer than the one {@code tier} belongs to: 0 for the newest. */
    public static int age(int tier) {
        for (int i = 0; i < NEWEST_FIRST.size(); i++) {
            if (tier >= NEWEST_FIRST.get(i).lowestTier()) {
                return i;
            }
        }
        return NEWEST_FIRST.size() - 1;
    }

    /** The generation {@code tier} belongs to. */
    public static CardGeneration of(int tier) {
        return NEWEST_FIRST.get(age(tier));
    }
}
