package io.hetgpu.gpu;

import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Normalised card model names: what {@code hetgpu.io/gpu-models} and the {@code gpu.model} label hold.
 * The driver's product names vary by vendor prefix, form factor and memory size
 * ({@code Tesla V100-SXM2-16GB}, {@code NVIDIA A100-SXM4-80GB}, {@code NVIDIA H100 80GB HBM3});
 * the model is the product's family name alone ({@code V100}, {@code A100}, {@code H100}), upper case.
 */
public final class CardModel {

    private static final Set<String> VENDOR_WORDS = Set.of("NVIDIA", "TESLA", "QUADRO", "GEFORCE", "GRID");
    /** Words that name a line, not a card: the card is the word after them (RTX A6000, RTX 4090). */
    private static final Set<String> LINE_WORDS = Set.of("RTX", "GTX", "TITAN");
    /** Labels allow [A-Za-z0-9._-]; anything else is dropped. */
    private static final Pattern NOT_LABEL_SAFE = Pattern.compile("[^A-Z0-9._-]");

    private CardModel() {
    }

    /**
     * The model of a product name as the driver reports it, or as a user writes it in an annotation
     * ({@code a100}, {@code NVIDIA A100}). Never empty for non-blank input.
     */
    public static String fromProductName(String productName) {
        if (productName == null || productName.isBlank()) {
            throw new IllegalArgumentException("product name must not be empty");
        }
        var words = productName.strip().toUpperCase(Locale.ROOT).split("[\\s_]+");
        int first = 0;
        while (first < words.length - 1 && VENDOR_WORDS.contains(words[first])) {
            first++;
        }
        var word = words[first];
        if (LINE_WORDS.contains(word) && first + 1 < words.length) {
            word = word + "-" + words[first + 1];
        } else {
            // "A100-SXM4-80GB" -> "A100": the form factor and memory follow the first dash.
            int dash = word.indexOf('-');
            if (dash > 0 && !LINE_WORDS.contains(word.substring(0, dash))) {
                word = word.substring(0, dash);
            }
        }
        var model = NOT_LABEL_SAFE.matcher(word).replaceAll("");
        return model.isEmpty() ? "UNKNOWN" : model;
    }
}
