package io.hetgpu.testcluster.docs;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The anchors GitHub gives a page's headings, in the page's order: the heading's text lowercased, every character but
 * letters, digits, {@code -}, {@code _} and spaces removed, each space a {@code -}; a slug already given gets
 * {@code -1}, {@code -2} … (as github-slugger, which GitHub's renderer follows). One instance per page.
 */
final class GithubSlugger {

    private static final Pattern REMOVED = Pattern.compile("[^\\p{L}\\p{M}\\p{N}\\p{Pc}\\- ]");

    /** For each slug given so far, how many times its base has been repeated. */
    private final Map<String, Integer> occurrences = new HashMap<>();

    /** The anchor of the next heading whose plain text is {@code text}. */
    String slug(String text) {
        var slug = REMOVED.matcher(text.toLowerCase(Locale.ROOT)).replaceAll("").replace(' ', '-');
        if (occurrences.containsKey(slug)) {
            var base = slug;
            do {
                int count = occurrences.merge(base, 1, Integer::sum);
                slug = base + "-" + count;
            } while (occurrences.containsKey(slug));
        }
        occurrences.put(slug, 0);
        return slug;
    }
}
