package io.hetgpu.gpu.tier;

import io.hetgpu.gpu.CardModel;
import io.hetgpu.gpu.ComputeCapability;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Ranks card models. Known products come from a table ({@link #defaults()}, which an admin overrides
 * or extends with {@link #withOverrides}); a product missing from it is placed just above the best
 * known card that it matches or beats on both compute capability and memory, and its tier says so.
 */
public final class CardCatalog {

    private static final long GIB = 1024;

    private final Map<String, KnownCard> cards;

    private CardCatalog(Map<String, KnownCard> cards) {
        this.cards = Map.copyOf(cards);
    }

    /**
     * The built-in table. Ranks follow training speed, not release date alone: T4 and L4 are inference
     * cards that train slower than a V100, and L40S sits below A100 for large-model training.
     */
    public static CardCatalog defaults() {
        return of(List.of(
                new KnownCard("K80", 10, cc(3, 7), 12 * GIB),
                new KnownCard("M60", 14, cc(5, 2), 8 * GIB),
                new KnownCard("M40", 15, cc(5, 2), 24 * GIB),
                new KnownCard("P4", 18, cc(6, 1), 8 * GIB),
                new KnownCard("P40", 20, cc(6, 1), 24 * GIB),
                new KnownCard("P100", 25, cc(6, 0), 16 * GIB),
                new KnownCard("T4", 30, cc(7, 5), 16 * GIB),
                new KnownCard("V100", 40, cc(7, 0), 32 * GIB),
                new KnownCard("V100S", 42, cc(7, 0), 32 * GIB),
                new KnownCard("A10", 45, cc(8, 6), 24 * GIB),
                new KnownCard("L4", 46, cc(8, 9), 24 * GIB),
                new KnownCard("A30", 50, cc(8, 0), 24 * GIB),
                new KnownCard("A40", 55, cc(8, 6), 48 * GIB),
                new KnownCard("L40", 58, cc(8, 9), 48 * GIB),
                new KnownCard("L40S", 60, cc(8, 9), 48 * GIB),
                new KnownCard("A100", 70, cc(8, 0), 80 * GIB),
                new KnownCard("H100", 85, cc(9, 0), 94 * GIB),
                new KnownCard("H800", 84, cc(9, 0), 80 * GIB),
                new KnownCard("H200", 90, cc(9, 0), 141 * GIB),
                new KnownCard("GH200", 92, cc(9, 0), 144 * GIB),
                new KnownCard("B200", 100, cc(10, 0), 192 * GIB)));
    }

    public static CardCatalog of(List<KnownCard> cards) {
        var byModel = new LinkedHashMap<String, KnownCard>();
        for (var card : cards) {
            byModel.put(CardModel.fromProductName(card.model()), card);
        }
        return new CardCatalog(byModel);
    }

    /** This catalog with some entries replaced or added (an admin's ConfigMap). */
    public CardCatalog withOverrides(List<KnownCard> overrides) {
        var merged = new LinkedHashMap<>(cards);
        for (var card : overrides) {
            merged.put(CardModel.fromProductName(card.model()), card);
        }
        return new CardCatalog(merged);
    }

    public boolean knows(String model) {
        return cards.containsKey(CardModel.fromProductName(model));
    }

    public List<KnownCard> cards() {
        return cards.values().stream().sorted(Comparator.comparingInt(KnownCard::rank)).toList();
    }

    /**
     * The rank given to GPUs whose model nothing tells (a node that offers {@code nvidia.com/gpu} but carries
     * neither hetgpu's inventory nor GPU Feature Discovery's labels): halfway between the catalog's lowest and
     * highest rank (55 with the defaults, A40's). Ranking them lowest would send every low-priority pod to
     * them and highest every high-priority pod; in the middle neither seeks them out while cards known to
     * suit it better are free.
     */
    public int middleRank() {
        int min = cards.values().stream().mapToInt(KnownCard::rank).min().orElse(1);
        int max = cards.values().stream().mapToInt(KnownCard::rank).max().orElse(1);
        return min + (max - min) / 2;
    }

    /**
     * The tier of a model. For a model the table lacks, the rank is one above the highest-ranked known
     * card whose compute capability and memory are both no greater than this card's (so an unknown
     * Hopper with 96 GiB lands just above H100), or 1 when it beats none.
     */
    public CardTier tierOf(String model, ComputeCapability computeCapability, long memoryMiB) {
        var normalised = CardModel.fromProductName(model);
        var known = cards.get(normalised);
        if (known != null) {
            return new CardTier(normalised, known.rank(), false, "catalog rank of " + normalised);
        }
        var below = cards.values().stream()
                .filter(card -> computeCapability.isAtLeast(card.computeCapability()) && memoryMiB >= card.maxMemoryMiB())
                .max(Comparator.comparingInt(KnownCard::rank));
        return below
                .map(card -> new CardTier(normalised, card.rank() + 1, true, "unknown product " + normalised
                        + ": ranked just above " + card.model() + " (compute capability " + computeCapability
                        + " >= " + card.computeCapability() + ", " + memoryMiB / GIB + " GiB >= " + card.maxMemoryMiB() / GIB + " GiB)"))
                .orElseGet(() -> new CardTier(normalised, 1, true, "unknown product " + normalised
                        + ": ranked lowest (beats no known card on both compute capability " + computeCapability
                        + " and memory " + memoryMiB / GIB + " GiB)"));
    }

    private static ComputeCapability cc(int major, int minor) {
        return new ComputeCapability(major, minor);
    }
}
