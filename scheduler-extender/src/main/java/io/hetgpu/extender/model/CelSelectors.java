package io.hetgpu.extender.model;

import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.gpu.CardModel;
import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.GpuArchitecture;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.tier.CardRequirements;
import io.hetgpu.gpu.tier.CardTier;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads what the common shapes of a DRA device selector's CEL expression ask of a GPU: the driver, the device type, the
 * card model or product name, the architecture, the tier hetgpu's driver publishes (read as the least tier a card must
 * have), least memory and least compute capability, each a clause joined by
 * {@code &&}. A clause of another shape is not evaluated here (hetgpu runs no CEL): it is listed as unread, and the
 * request is judged on the clauses it could read, so that the extender refuses no node for what it did not understand;
 * kube-scheduler's allocator, which evaluates the whole expression, decides the rest.
 */
public final class CelSelectors {

    /** Characters of one expression read: the API allows 10 Ki. */
    public static final int MAX_EXPRESSION_CHARS = 10 * 1024;
    /** Clauses of one expression read. */
    public static final int MAX_CLAUSES = 32;

    private static final String QUOTED = "(?:\"([^\"\\\\]{0,256})\"|'([^'\\\\]{0,256})')";
    private static final Pattern DRIVER = Pattern.compile("device\\.driver\\s*==\\s*" + QUOTED);
    private static final Pattern ATTRIBUTE_EQUALS = Pattern.compile(
            "device\\.attributes\\[" + QUOTED + "\\]\\.([A-Za-z][A-Za-z0-9_]{0,62})\\s*==\\s*" + QUOTED);
    private static final Pattern ATTRIBUTE_IN = Pattern.compile(
            "device\\.attributes\\[" + QUOTED + "\\]\\.([A-Za-z][A-Za-z0-9_]{0,62})\\s+in\\s+\\[([^\\]]{0,2048})\\]");
    private static final Pattern AT_LEAST = Pattern.compile("device\\.(attributes|capacity)\\[" + QUOTED
            + "\\]\\.([A-Za-z][A-Za-z0-9_]{0,62})\\.(?:compareTo\\((quantity|semver)\\(" + QUOTED + "\\)\\)\\s*(>=|>)\\s*0"
            + "|isGreaterThan\\((quantity|semver)\\(" + QUOTED + "\\)\\))");
    private static final Pattern ATTRIBUTE_INT = Pattern.compile(
            "device\\.attributes\\[" + QUOTED + "\\]\\.([A-Za-z][A-Za-z0-9_]{0,62})\\s*(==|>=|<=|>|<)\\s*(\\d{1,9})");
    private static final Pattern ATTRIBUTE_INT_IN = Pattern.compile(
            "device\\.attributes\\[" + QUOTED + "\\]\\.([A-Za-z][A-Za-z0-9_]{0,62})\\s+in\\s+\\[\\s*(\\d{1,9}(?:\\s*,\\s*\\d{1,9}){0,31})\\s*\\]");
    private static final Pattern LIST_ITEM = Pattern.compile("\\s*" + QUOTED + "\\s*");
    private static final Pattern VERSION = Pattern.compile("(\\d{1,2})\\.(\\d{1,2})(?:\\.\\d{1,9})?");
    private static final BigDecimal MIB = BigDecimal.valueOf(1L << 20);

    private CelSelectors() {
    }

    /**
     * What one or more selectors, all of which a device must pass, ask of it.
     *
     * @param namesGpuDriver some clause names a {@linkplain DraDriver#KNOWN GPU driver} (its name or its attributes)
     * @param otherType      some clause asks for a device type other than a whole GPU (a MIG slice)
     * @param models         the card models allowed, empty for any
     * @param minMemoryMiB   least memory, 0 for any
     * @param minCapability  least compute capability
     * @param minTier        least tier, {@link CardRequirements#ANY_TIER} for any
     * @param unread         the clauses not read, quoted
     */
    public record Reading(boolean namesGpuDriver, boolean otherType, Set<String> models, long minMemoryMiB,
                          ComputeCapability minCapability, CardTier minTier, List<String> unread) {

        public static final Reading NOTHING = new Reading(false, false, Set.of(), 0, CardRequirements.ANY_COMPUTE_CAPABILITY, List.of());

        public Reading {
            models = java.util.Collections.unmodifiableSet(new LinkedHashSet<>(models));
            java.util.Objects.requireNonNull(minTier, "minTier");
            unread = List.copyOf(unread);
        }

        /** A reading that asks no tier. */
        public Reading(boolean namesGpuDriver, boolean otherType, Set<String> models, long minMemoryMiB, ComputeCapability minCapability,
                       List<String> unread) {
            this(namesGpuDriver, otherType, models, minMemoryMiB, minCapability, CardRequirements.ANY_TIER, unread);
        }

        /** What a device passing both asks: both sets of clauses hold. */
        public Reading and(Reading other) {
            Set<String> both;
            if (models.isEmpty() || other.models.isEmpty()) {
                both = models.isEmpty() ? other.models : models;
            } else {
                both = new LinkedHashSet<>(models);
                both.retainAll(other.models);
            }
            var unreadBoth = new ArrayList<>(unread);
            unreadBoth.addAll(other.unread);
            return new Reading(namesGpuDriver || other.namesGpuDriver, otherType || other.otherType, both,
                    Math.max(minMemoryMiB, other.minMemoryMiB),
                    minCapability.isAtLeast(other.minCapability) ? minCapability : other.minCapability,
                    minTier.rank() >= other.minTier.rank() ? minTier : other.minTier, unreadBoth);
        }

        /** The requirements of the clauses read. */
        public CardRequirements cards() {
            return new CardRequirements(models, minTier, Set.of(), minMemoryMiB, minCapability);
        }
    }

    /** What the expression asks of a device. */
    public static Reading read(String expression, CardCatalog catalog) {
        if (expression == null || expression.isBlank()) {
            return Reading.NOTHING;
        }
        if (expression.length() > MAX_EXPRESSION_CHARS) {
            return unread(expression, "longer than " + MAX_EXPRESSION_CHARS + " characters");
        }
        var clauses = splitTopLevel(expression, "&&");
        if (clauses == null) {
            return unread(expression, "unbalanced");
        }
        var reading = Reading.NOTHING;
        int read = 0;
        for (var clause : clauses) {
            if (++read > MAX_CLAUSES) {
                return reading.and(unread(expression, "more than " + MAX_CLAUSES + " clauses"));
            }
            reading = reading.and(clause(stripParentheses(clause.strip()), catalog));
        }
        return reading;
    }

    private static Reading unread(String text, String why) {
        return new Reading(false, false, Set.of(), 0, CardRequirements.ANY_COMPUTE_CAPABILITY, List.of(Quote.of(text) + " (" + why + ")"));
    }

    private static Reading clause(String clause, CardCatalog catalog) {
        var driver = DRIVER.matcher(clause);
        if (driver.matches()) {
            return DraDriver.named(quoted(driver, 1)).isPresent() ? gpuDriver() : Reading.NOTHING;
        }
        var equals = ATTRIBUTE_EQUALS.matcher(clause);
        if (equals.matches()) {
            return attribute(clause, quoted(equals, 1), equals.group(3), List.of(quoted(equals, 4)), catalog);
        }
        var whole = ATTRIBUTE_INT.matcher(clause);
        if (whole.matches()) {
            // == and >= ask at least that tier, > one more: a floor no narrower than the clause. < and <= ask at most a tier,
            // which the extender does not hold a card to: a ceiling only narrows what kube-scheduler allocates (a band of
            // tiers in hetgpu's claims), never what a node the extender passes may be offered, so it asks no floor.
            long value = Long.parseLong(whole.group(5));
            var operator = whole.group(4);
            long least = operator.startsWith("<") ? 0 : operator.equals(">") ? value + 1 : value;
            return tier(clause, quoted(whole, 1), whole.group(3), least, catalog);
        }
        var wholeIn = ATTRIBUTE_INT_IN.matcher(clause);
        if (wholeIn.matches()) {
            long least = java.util.Arrays.stream(wholeIn.group(4).split(",")).mapToLong(item -> Long.parseLong(item.strip())).min().orElseThrow();
            return tier(clause, quoted(wholeIn, 1), wholeIn.group(3), least, catalog);
        }
        var in = ATTRIBUTE_IN.matcher(clause);
        if (in.matches()) {
            var values = listOf(in.group(4));
            return values == null ? unread(clause, "not a list of strings") : attribute(clause, quoted(in, 1), in.group(3), values, catalog);
        }
        var atLeast = AT_LEAST.matcher(clause);
        if (atLeast.matches()) {
            return atLeast(clause, atLeast);
        }
        var alternatives = splitTopLevel(clause, "||");
        if (alternatives != null && alternatives.size() > 1) {
            // Alternatives of one model or product attribute ("A100" || "H100") are a set of models, alternatives of tiers
            // the least of them; anything else is not read.
            var models = new LinkedHashSet<String>();
            CardTier least = null;
            boolean gpu = false;
            if (alternatives.size() > MAX_CLAUSES) {
                return unread(clause, "more than " + MAX_CLAUSES + " alternatives");
            }
            for (var alternative : alternatives) {
                var one = clause(stripParentheses(alternative.strip()), catalog);
                boolean model = !one.models().isEmpty() && one.minTier().equals(CardRequirements.ANY_TIER);
                boolean tier = one.models().isEmpty() && !one.minTier().equals(CardRequirements.ANY_TIER);
                if (!one.unread().isEmpty() || !(model || tier) || one.minMemoryMiB() > 0
                        || !one.minCapability().equals(CardRequirements.ANY_COMPUTE_CAPABILITY)) {
                    return unread(clause, "unknown alternatives");
                }
                gpu |= one.namesGpuDriver();
                models.addAll(one.models());
                if (tier) {
                    least = least == null || one.minTier().rank() < least.rank() ? one.minTier() : least;
                }
            }
            if (least != null && !models.isEmpty()) {
                return unread(clause, "alternatives of models and tiers");
            }
            return new Reading(gpu, false, models, 0, CardRequirements.ANY_COMPUTE_CAPABILITY,
                    least == null ? CardRequirements.ANY_TIER : least, List.of());
        }
        return unread(clause, "unknown shape");
    }

    private static Reading gpuDriver() {
        return new Reading(true, false, Set.of(), 0, CardRequirements.ANY_COMPUTE_CAPABILITY, List.of());
    }

    private static Reading attribute(String clause, String domain, String name, List<String> values, CardCatalog catalog) {
        var known = DraDriver.named(domain);
        if (known.isEmpty()) {
            // Another domain's attribute (resource.kubernetes.io's PCIe root, a NIC's): nothing hetgpu reads of a card.
            return unread(clause, "attribute of another domain");
        }
        var driver = known.get();
        if (name.equals(driver.type())) {
            return new Reading(true, !values.contains(driver.gpuType()), Set.of(), 0, CardRequirements.ANY_COMPUTE_CAPABILITY, List.of());
        }
        var models = new LinkedHashSet<String>();
        if (name.equals(driver.product()) || name.equals(driver.model())) {
            for (var value : values) {
                if (value.isBlank()) {
                    return unread(clause, "an empty name");
                }
                models.add(CardModel.fromProductName(value));
            }
        } else if (name.equals(driver.architecture())) {
            for (var value : values) {
                var first = SliceReader.firstCapability(value);
                if (first == null) {
                    return unread(clause, "an architecture hetgpu does not know");
                }
                var architecture = GpuArchitecture.of(first);
                catalog.cards().stream().filter(card -> GpuArchitecture.of(card.computeCapability()) == architecture)
                        .forEach(card -> models.add(CardModel.fromProductName(card.model())));
            }
            if (models.isEmpty()) {
                return unread(clause, "no card of the tier table has that architecture");
            }
        } else {
            return new Reading(true, false, Set.of(), 0, CardRequirements.ANY_COMPUTE_CAPABILITY,
                    List.of(Quote.of(clause) + " (attribute " + name + " not read)"));
        }
        return new Reading(true, false, models, 0, CardRequirements.ANY_COMPUTE_CAPABILITY, List.of());
    }

    /**
     * An int attribute compared with a number: the tier of hetgpu's driver read as the least tier a card must have (an
     * exact tier as "that tier or newer", which admits every card the clause admits); any other int attribute is not read.
     */
    private static Reading tier(String clause, String domain, String name, long least, CardCatalog catalog) {
        var known = DraDriver.named(domain);
        if (known.isEmpty()) {
            return unread(clause, "attribute of another domain");
        }
        var driver = known.get();
        if (driver.tier().isEmpty() || !name.equals(driver.tier())) {
            return new Reading(true, false, Set.of(), 0, CardRequirements.ANY_COMPUTE_CAPABILITY,
                    List.of(Quote.of(clause) + " (attribute " + name + " not read)"));
        }
        if (least > SliceReader.MAX_TIER) {
            return unread(clause, "a tier above any card's");
        }
        return new Reading(true, false, Set.of(), 0, CardRequirements.ANY_COMPUTE_CAPABILITY, floor((int) least, catalog), List.of());
    }

    /** The floor of a tier, named after the weakest card the catalog ranks there or above ("tier 7" when it has none). */
    static CardTier floor(int rank, CardCatalog catalog) {
        if (rank <= CardRequirements.ANY_TIER.rank()) {
            return CardRequirements.ANY_TIER;
        }
        var weakest = catalog.cards().stream().filter(card -> card.rank() >= rank)
                .min(java.util.Comparator.comparingInt(io.hetgpu.gpu.tier.KnownCard::rank));
        var name = weakest.filter(card -> card.rank() == rank).map(card -> CardModel.fromProductName(card.model())).orElse("tier " + rank);
        return new CardTier(name, rank, false, "tier " + rank + " as a DRA selector asks it");
    }

    private static Reading atLeast(String clause, Matcher matcher) {
        var domain = quoted(matcher, 2);
        var name = matcher.group(4);
        var function = matcher.group(5) != null ? matcher.group(5) : matcher.group(9);
        var value = matcher.group(5) != null ? quoted(matcher, 6) : quoted(matcher, 10);
        var known = DraDriver.named(domain);
        if (known.isEmpty()) {
            return unread(clause, "capacity of another domain");
        }
        var driver = known.get();
        boolean capacity = matcher.group(1).equals("capacity");
        if (capacity && name.equals(driver.memory()) && function.equals("quantity")) {
            try {
                var bytes = Quantity.getAmountInBytes(new Quantity(value));
                if (bytes.signum() < 0 || bytes.compareTo(BigDecimal.valueOf(1L << 50)) > 0) {
                    return unread(clause, "not a GPU's memory");
                }
                return new Reading(true, false, Set.of(), bytes.divide(MIB, 0, RoundingMode.CEILING).longValue(),
                        CardRequirements.ANY_COMPUTE_CAPABILITY, List.of());
            } catch (RuntimeException e) {
                return unread(clause, "not a quantity");
            }
        }
        if (!capacity && name.equals(driver.computeCapability()) && function.equals("semver")) {
            var version = VERSION.matcher(value.strip());
            if (version.matches() && Integer.parseInt(version.group(1)) > 0) {
                return new Reading(true, false, Set.of(), 0,
                        new ComputeCapability(Integer.parseInt(version.group(1)), Integer.parseInt(version.group(2))), List.of());
            }
            return unread(clause, "not a version");
        }
        return new Reading(true, false, Set.of(), 0, CardRequirements.ANY_COMPUTE_CAPABILITY,
                List.of(Quote.of(clause) + " (" + name + " not read)"));
    }

    private static String quoted(Matcher matcher, int group) {
        return matcher.group(group) != null ? matcher.group(group) : matcher.group(group + 1);
    }

    /** The strings of a CEL list's body, or null when it holds anything else. */
    private static List<String> listOf(String body) {
        var values = new ArrayList<String>();
        for (var item : body.split(",", MAX_CLAUSES + 1)) {
            if (values.size() >= MAX_CLAUSES) {
                return null;
            }
            var matcher = LIST_ITEM.matcher(item);
            if (!matcher.matches()) {
                return null;
            }
            values.add(quoted(matcher, 1));
        }
        return values;
    }

    private static String stripParentheses(String clause) {
        var text = clause;
        // Parentheses deeper than any selector needs are left on, and the clause then goes unread.
        for (int depth = 0; depth < MAX_CLAUSES && text.startsWith("(") && text.endsWith(")"); depth++) {
            var inner = text.substring(1, text.length() - 1);
            if (splitTopLevel(inner, "&&") == null) {
                break;
            }
            // Only parentheses that enclose the whole clause: "(a) && (b)" starts and ends with one but is two clauses.
            if (!balanced(inner)) {
                break;
            }
            text = inner.strip();
        }
        return text;
    }

    private static boolean balanced(String text) {
        int depth = 0;
        char quote = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (quote != 0) {
                if (c == '\\') {
                    i++;
                } else if (c == quote) {
                    quote = 0;
                }
            } else if (c == '"' || c == '\'') {
                quote = c;
            } else if (c == '(') {
                depth++;
            } else if (c == ')' && --depth < 0) {
                return false;
            }
        }
        return depth == 0 && quote == 0;
    }

    /** The parts of {@code text} between the operator where it stands outside quotes and brackets, or null when unbalanced. */
    static List<String> splitTopLevel(String text, String operator) {
        var parts = new ArrayList<String>();
        int depth = 0;
        char quote = 0;
        int start = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (quote != 0) {
                if (c == '\\') {
                    i++;
                } else if (c == quote) {
                    quote = 0;
                }
                continue;
            }
            switch (c) {
                case '"', '\'' -> quote = c;
                case '(', '[', '{' -> depth++;
                case ')', ']', '}' -> {
                    if (--depth < 0) {
                        return null;
                    }
                }
                default -> {
                    if (depth == 0 && text.startsWith(operator, i)) {
                        parts.add(text.substring(start, i));
                        start = i + operator.length();
                        i += operator.length() - 1;
                    }
                }
            }
        }
        if (depth != 0 || quote != 0) {
            return null;
        }
        parts.add(text.substring(start));
        return parts;
    }
}
