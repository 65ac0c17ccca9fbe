package io.hetgpu.kubescheduler.dra;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A semantic version (semver.org 2.0.0) as the version attributes of a ResourceSlice hold them
 * ({@code cudaComputeCapability: 9.0.0}) and as CEL's {@code semver()} reads them: strict by default (no {@code v}, no
 * missing parts, no leading zeros), build metadata ignored in comparisons.
 */
public record Semver(long major, long minor, long patch, List<String> preRelease) implements Comparable<Semver> {

    static final int MAX_LENGTH = 256;

    public Semver {
        preRelease = List.copyOf(preRelease);
    }

    /** The version a string denotes, strictly, or empty. */
    public static Optional<Semver> parse(String text) {
        if (text == null || text.isEmpty() || text.length() > MAX_LENGTH) {
            return Optional.empty();
        }
        var rest = text;
        var plus = rest.indexOf('+');
        if (plus >= 0) {
            var build = rest.substring(plus + 1);
            if (!identifiers(build, false)) {
                return Optional.empty();
            }
            rest = rest.substring(0, plus);
        }
        List<String> pre = List.of();
        var dash = rest.indexOf('-');
        if (dash >= 0) {
            var preText = rest.substring(dash + 1);
            if (!identifiers(preText, true)) {
                return Optional.empty();
            }
            pre = List.of(preText.split("\\.", -1));
            rest = rest.substring(0, dash);
        }
        var parts = rest.split("\\.", -1);
        if (parts.length != 3) {
            return Optional.empty();
        }
        var numbers = new long[3];
        for (int i = 0; i < 3; i++) {
            if (!numeric(parts[i]) || (parts[i].length() > 1 && parts[i].charAt(0) == '0') || parts[i].length() > 18) {
                return Optional.empty();
            }
            numbers[i] = Long.parseLong(parts[i]);
        }
        return Optional.of(new Semver(numbers[0], numbers[1], numbers[2], pre));
    }

    /**
     * As CEL's {@code semver(s, true)}: a leading {@code v} dropped, leading zeros removed, a missing minor or patch
     * taken as 0.
     */
    public static Optional<Semver> parseNormalized(String text) {
        if (text == null || text.length() > MAX_LENGTH) {
            return Optional.empty();
        }
        var s = text.startsWith("v") ? text.substring(1) : text;
        var parts = new ArrayList<>(List.of(s.split("\\.", 3)));
        for (int i = 0; i < parts.size(); i++) {
            var p = parts.get(i);
            if (p.length() > 1) {
                var trimmed = p.replaceFirst("^0+", "");
                if (trimmed.isEmpty() || !Character.isDigit(trimmed.charAt(0))) {
                    trimmed = "0" + trimmed;
                }
                parts.set(i, trimmed);
            }
        }
        if (parts.size() < 3) {
            var last = parts.get(parts.size() - 1);
            if (last.contains("+") || last.contains("-")) {
                return Optional.empty();
            }
            while (parts.size() < 3) {
                parts.add("0");
            }
        }
        return parse(String.join(".", parts));
    }

    private static boolean numeric(String s) {
        return !s.isEmpty() && s.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    private static boolean identifiers(String text, boolean preRelease) {
        if (text.isEmpty()) {
            return false;
        }
        for (var id : text.split("\\.", -1)) {
            if (id.isEmpty() || !id.chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-')) {
                return false;
            }
            if (preRelease && numeric(id) && id.length() > 1 && id.charAt(0) == '0') {
                return false;
            }
        }
        return true;
    }

    @Override
    public int compareTo(Semver other) {
        int c = Long.compare(major, other.major);
        if (c == 0) {
            c = Long.compare(minor, other.minor);
        }
        if (c == 0) {
            c = Long.compare(patch, other.patch);
        }
        if (c != 0) {
            return Integer.signum(c);
        }
        // A version without pre-release identifiers ranks above any with them.
        if (preRelease.isEmpty() || other.preRelease.isEmpty()) {
            return Boolean.compare(preRelease.isEmpty(), other.preRelease.isEmpty());
        }
        for (int i = 0; i < Math.min(preRelease.size(), other.preRelease.size()); i++) {
            var a = preRelease.get(i);
            var b = other.preRelease.get(i);
            boolean an = numeric(a);
            boolean bn = numeric(b);
            int d = an && bn ? compareNumeric(a, b) : an ? -1 : bn ? 1 : a.compareTo(b);
            if (d != 0) {
                return Integer.signum(d);
            }
        }
        return Integer.signum(Integer.compare(preRelease.size(), other.preRelease.size()));
    }

    private static int compareNumeric(String a, String b) {
        return a.length() != b.length() ? Integer.compare(a.length(), b.length()) : a.compareTo(b);
    }

    @Override
    public String toString() {
        return major + "." + minor + "." + patch + (preRelease.isEmpty() ? "" : "-" + String.join(".", preRelease));
    }
}
