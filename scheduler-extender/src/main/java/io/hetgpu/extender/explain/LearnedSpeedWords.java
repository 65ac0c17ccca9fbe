package io.hetgpu.extender.explain;

import io.hetgpu.extender.explain.PodSpeeds.Figure;
import io.hetgpu.extender.explain.PodSpeeds.Source;
import java.util.Locale;

/**
 * How an explanation says that a workload's speed decided: with the figures, and where they come from, so a user can
 * check them ({@code kubectl hetgpu throughputs}) and knows how much they rest on. ASCII only, as every reason is
 * (an answer's size is bounded by it): "x", not a multiplication sign.
 *
 * <pre>
 * resnet50 runs 3.1x faster per GPU on A100 than on K80 (learned, 14 and 9 runs)
 * resnet50 runs at 0.12 of its A100 speed on K80 (learned, 9 runs; minimumSpeedShare 0.3)
 * </pre>
 */
public final class LearnedSpeedWords {

    private LearnedSpeedWords() {
    }

    /** Why a set of {@code slower} cards lost to one of {@code faster}: how many times faster the class runs there. */
    public static String faster(String workload, Figure faster, Figure slower) {
        double ratio = faster.perGpu() / slower.perGpu();
        if (faster.card().equals(slower.card())) {
            return workload + " runs at the same speed on both (" + faster.card() + ", " + source(faster) + ")";
        }
        return workload + " runs " + times(ratio) + " faster per GPU on " + faster.card() + " than on " + slower.card() + " ("
                + sources(faster, slower) + ")";
    }

    /**
     * Why a card is refused for the class ({@code minimumSpeedShare}): its share of the class's fastest card, with both
     * figures' sources.
     */
    public static String tooSlow(String workload, Figure card, Figure fastest, double minimumShare) {
        double share = card.perGpu() / fastest.perGpu();
        // The fastest card's source only where it is not a measurement: a share of a guess is worth knowing as such.
        var sources = source(card) + (fastest.source() == Source.LEARNED || fastest.card().equals(card.card()) ? ""
                : "; " + fastest.card() + ": " + source(fastest));
        return String.format(Locale.ROOT, "%s runs at %s of its %s speed on %s (%s; minimumSpeedShare %s)", workload, share(share),
                fastest.card(), card.card(), sources, share(minimumShare));
    }

    /** Where a figure comes from, in a few words: "learned, 14 runs", "a prior, never run there", "admin's table". */
    public static String source(Figure figure) {
        return switch (figure.source()) {
            case LEARNED -> "learned, " + figure.samples() + (figure.samples() == 1 ? " run" : " runs");
            case PRIOR -> "a prior, never run there";
            case CONFIGURED -> "admin's table";
        };
    }

    private static String sources(Figure faster, Figure slower) {
        if (faster.source() == Source.LEARNED && slower.source() == Source.LEARNED) {
            return "learned, " + faster.samples() + " and " + slower.samples() + (slower.samples() == 1 ? " run" : " runs");
        }
        if (faster.source() == slower.source()) {
            return faster.source() == Source.PRIOR ? "priors, never run on either" : source(faster);
        }
        return faster.card() + " " + source(faster) + "; " + slower.card() + " " + source(slower);
    }

    /** A ratio as people say it: 1.05x, 3.1x, 12x. */
    static String times(double ratio) {
        if (ratio < 1.1) {
            return String.format(Locale.ROOT, "%.2fx", ratio);
        }
        return ratio < 10 ? String.format(Locale.ROOT, "%.1fx", ratio) : String.format(Locale.ROOT, "%.0fx", ratio);
    }

    /** A share to two places, or its first two significant digits below 0.01: 0.3, 0.12, 0.0031. */
    static String share(double share) {
        if (share >= 0.01) {
            var text = String.format(Locale.ROOT, "%.2f", share);
            return text.endsWith("0") ? text.substring(0, text.length() - 1) : text;
        }
        return String.format(Locale.ROOT, "%.2g", share);
    }
}
