package io.hetgpu.gpu;

import java.util.regex.Pattern;

/** CUDA compute capability, e.g. 8.0 for A100. Ordered by major, then minor. */
public record ComputeCapability(int major, int minor) implements Comparable<ComputeCapability> {

    private static final Pattern FORM = Pattern.compile("(\\d{1,2})\\.(\\d{1,2})");

    public ComputeCapability {
        if (major < 1 || minor < 0) {
            throw new IllegalArgumentException("compute capability must be positive, got " + major + "." + minor);
        }
    }

    /** Parses "8.0"; throws {@link IllegalArgumentException} quoting the text otherwise. */
    public static ComputeCapability parse(String text) {
        var matcher = FORM.matcher(text == null ? "" : text.strip());
        if (!matcher.matches()) {
            throw new IllegalArgumentException("not a compute capability (expected MAJOR.MINOR such as 8.0): " + Quote.of(text));
        }
        return new ComputeCapability(Integer.parseInt(matcher.group(1)), Integer.parseInt(matcher.group(2)));
    }

    public boolean isAtLeast(ComputeCapability other) {
        return compareTo(other) >= 0;
    }

    @Override
    public int compareTo(ComputeCapability other) {
        return major != other.major ? Integer.compare(major, other.major) : Integer.compare(minor, other.minor);
    }

    @Override
    public String toString() {
        return major + "." + minor;
    }
}
