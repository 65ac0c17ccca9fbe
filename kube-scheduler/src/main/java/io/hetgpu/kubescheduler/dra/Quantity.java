package io.hetgpu.kubescheduler.dra;

import java.math.BigDecimal;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A Kubernetes resource quantity ({@code 80Gi}, {@code 1500m}, {@code 1e3}) as an exact number, which is what CEL's
 * {@code compareTo}, {@code isGreaterThan} and {@code isLessThan} compare. Formats are kept apart from the value: two
 * quantities are equal when their amounts are ({@code 1Ki} and {@code 1024}).
 */
public record Quantity(BigDecimal amount) implements Comparable<Quantity> {

    /** Longer strings are refused before they are parsed: a quantity read from a pod author is untrusted. */
    static final int MAX_LENGTH = 64;
    /** Beyond what any quantity the API server accepts can hold; keeps a {@code 1e999999999} from costing anything. */
    private static final int MAX_EXPONENT = 64;
    private static final Pattern FORMAT = Pattern.compile("([+-]?[0-9]*\\.?[0-9]*)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?");

    public Quantity {
        amount = amount.stripTrailingZeros();
    }

    public static Quantity of(long amount) {
        return new Quantity(BigDecimal.valueOf(amount));
    }

    /** The quantity a string denotes, or empty when it is not one. */
    public static Optional<Quantity> parse(String text) {
        if (text == null || text.isEmpty() || text.length() > MAX_LENGTH) {
            return Optional.empty();
        }
        var m = FORMAT.matcher(text);
        if (!m.matches()) {
            return Optional.empty();
        }
        var number = m.group(1);
        if (number.isEmpty() || number.chars().noneMatch(Character::isDigit)) {
            return Optional.empty();
        }
        BigDecimal value;
        try {
            value = new BigDecimal(number.startsWith("+") ? number.substring(1) : number);
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
        var suffix = m.group(2) == null ? "" : m.group(2);
        return multiplier(suffix).map(f -> new Quantity(value.multiply(f)));
    }

    private static Optional<BigDecimal> multiplier(String suffix) {
        return switch (suffix) {
            case "" -> Optional.of(BigDecimal.ONE);
            case "Ki" -> Optional.of(BigDecimal.valueOf(1L << 10));
            case "Mi" -> Optional.of(BigDecimal.valueOf(1L << 20));
            case "Gi" -> Optional.of(BigDecimal.valueOf(1L << 30));
            case "Ti" -> Optional.of(BigDecimal.valueOf(1L << 40));
            case "Pi" -> Optional.of(BigDecimal.valueOf(1L << 50));
            case "Ei" -> Optional.of(BigDecimal.valueOf(1L << 60));
            case "n" -> Optional.of(BigDecimal.ONE.scaleByPowerOfTen(-9));
            case "u" -> Optional.of(BigDecimal.ONE.scaleByPowerOfTen(-6));
            case "m" -> Optional.of(BigDecimal.ONE.scaleByPowerOfTen(-3));
            case "k" -> Optional.of(BigDecimal.ONE.scaleByPowerOfTen(3));
            case "M" -> Optional.of(BigDecimal.ONE.scaleByPowerOfTen(6));
            case "G" -> Optional.of(BigDecimal.ONE.scaleByPowerOfTen(9));
            case "T" -> Optional.of(BigDecimal.ONE.scaleByPowerOfTen(12));
            case "P" -> Optional.of(BigDecimal.ONE.scaleByPowerOfTen(15));
            case "E" -> Optional.of(BigDecimal.ONE.scaleByPowerOfTen(18));
            default -> {
                int exponent;
                try {
                    exponent = Integer.parseInt(suffix.substring(1));
                } catch (NumberFormatException e) {
                    yield Optional.empty();
                }
                yield Math.abs(exponent) > MAX_EXPONENT ? Optional.empty() : Optional.of(BigDecimal.ONE.scaleByPowerOfTen(exponent));
            }
        };
    }

    @Override
    public int compareTo(Quantity other) {
        return amount.compareTo(other.amount);
    }

    @Override
    public String toString() {
        return amount.toPlainString();
    }
}
