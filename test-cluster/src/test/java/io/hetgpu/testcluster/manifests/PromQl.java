package io.hetgpu.testcluster.manifests;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The series a PromQL expression reads: each metric selector ({@code name{label="v"}}) with the label names it
 * matches on, and the labels it groups by ({@code by (…)}, {@code without (…)}, {@code on (…)}). Enough of PromQL's
 * lexical rules to find them (string literals, durations in brackets, functions, keywords, numbers), not an evaluator:
 * what an alert or a panel names must be something the programs export.
 */
public final class PromQl {

    /** A metric an expression reads and the label names its matchers use. */
    public record Selector(String metric, Set<String> labels) {
    }

    /** Every selector and every grouping label of one expression. */
    public record Reads(List<Selector> selectors, Set<String> groupingLabels) {
    }

    private static final Set<String> KEYWORDS = Set.of("by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
            "unless", "bool", "offset", "inf", "nan", "atan2");
    private static final Set<String> GROUPING = Set.of("by", "without", "on", "ignoring", "group_left", "group_right");
    /** Aggregation operators: {@code sum by (a) (…)} puts the grouping between the name and its parenthesis. */
    private static final Set<String> AGGREGATIONS = Set.of("sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
            "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio");

    private PromQl() {
    }

    public static Reads reads(String expr) {
        var selectors = new ArrayList<Selector>();
        var grouping = new LinkedHashSet<String>();
        int i = 0;
        while (i < expr.length()) {
            char c = expr.charAt(i);
            if (c == '"' || c == '\'' || c == '`') {
                i = afterString(expr, i);
            } else if (c == '[') {
                i = expr.indexOf(']', i) + 1;
            } else if (c == '{') {
                // A selector without a name ({__name__=~"…"}): its labels count, the metric is unknown.
                int end = closing(expr, i, '{', '}');
                selectors.add(new Selector("", labelNames(expr.substring(i + 1, end))));
                i = end + 1;
            } else if (Character.isDigit(c) || (c == '.' && i + 1 < expr.length() && Character.isDigit(expr.charAt(i + 1)))) {
                i = afterNumber(expr, i);
            } else if (Character.isLetter(c) || c == '_' || c == ':') {
                int end = i;
                while (end < expr.length() && (Character.isLetterOrDigit(expr.charAt(end)) || expr.charAt(end) == '_' || expr.charAt(end) == ':')) {
                    end++;
                }
                String word = expr.substring(i, end);
                int next = skipSpace(expr, end);
                if (GROUPING.contains(word)) {
                    if (next < expr.length() && expr.charAt(next) == '(') {
                        int close = closing(expr, next, '(', ')');
                        for (String label : expr.substring(next + 1, close).split(",")) {
                            if (!label.isBlank()) {
                                grouping.add(label.strip());
                            }
                        }
                        i = close + 1;
                    } else {
                        i = end;
                    }
                } else if (KEYWORDS.contains(word.toLowerCase(java.util.Locale.ROOT)) || (next < expr.length() && expr.charAt(next) == '(')
                        || AGGREGATIONS.contains(word.toLowerCase(java.util.Locale.ROOT))) {
                    i = end; // an operator keyword, or a function or aggregation called here
                } else if (next < expr.length() && expr.charAt(next) == '{') {
                    int close = closing(expr, next, '{', '}');
                    selectors.add(new Selector(word, labelNames(expr.substring(next + 1, close))));
                    i = close + 1;
                } else {
                    selectors.add(new Selector(word, Set.of()));
                    i = end;
                }
            } else {
                i++;
            }
        }
        return new Reads(List.copyOf(selectors), Set.copyOf(grouping));
    }

    /** The label names of a matcher list: {@code a="x", b=~"y|z"} gives a and b. */
    private static Set<String> labelNames(String matchers) {
        var names = new LinkedHashSet<String>();
        int i = 0;
        while (i < matchers.length()) {
            char c = matchers.charAt(i);
            if (c == '"' || c == '\'' || c == '`') {
                i = afterString(matchers, i);
            } else if (Character.isLetter(c) || c == '_') {
                int end = i;
                while (end < matchers.length() && (Character.isLetterOrDigit(matchers.charAt(end)) || matchers.charAt(end) == '_')) {
                    end++;
                }
                names.add(matchers.substring(i, end));
                i = end;
            } else {
                i++;
            }
        }
        return names;
    }

    private static int afterString(String text, int open) {
        char quote = text.charAt(open);
        int i = open + 1;
        while (i < text.length() && text.charAt(i) != quote) {
            i += text.charAt(i) == '\\' && quote != '`' ? 2 : 1;
        }
        if (i >= text.length()) {
            throw new IllegalArgumentException("unterminated string at " + open + " in " + text);
        }
        return i + 1;
    }

    private static int afterNumber(String text, int start) {
        int i = start;
        while (i < text.length() && (Character.isLetterOrDigit(text.charAt(i)) || text.charAt(i) == '.')) {
            i++;
        }
        return i;
    }

    private static int skipSpace(String text, int from) {
        int i = from;
        while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
            i++;
        }
        return i;
    }

    private static int closing(String text, int open, char opening, char closing) {
        int depth = 0;
        for (int i = open; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\'' || c == '`') {
                i = afterString(text, i) - 1;
            } else if (c == opening) {
                depth++;
            } else if (c == closing && --depth == 0) {
                return i;
            }
        }
        throw new IllegalArgumentException("no closing " + closing + " for the one at " + open + " in " + text);
    }
}
