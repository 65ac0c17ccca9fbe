package io.hetgpu.gpu.inventory;

import io.hetgpu.gpu.Quote;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Kubernetes' rules for the qualified names hetgpu is configured with: a label key ({@code rackLabel}) and an
 * extended resource name ({@code --resource-name}, {@code resourceName}), as the API server validates them
 * ({@code IsQualifiedName}, {@code IsExtendedResourceName}). Both programs check their settings here, so that a
 * name one accepts the other accepts too, and a typo stops the program at start instead of matching nothing.
 */
public final class KubernetesNames {

    /** A DNS subdomain: lower-case labels of letters, digits and '-', joined by '.'; at most 253 characters. */
    private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    /** A DNS label, as a namespace's name is: lower-case letters, digits and '-', starting and ending with a letter or digit. */
    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    /** The name part: letters, digits, '-', '_', '.', starting and ending with a letter or digit; at most 63. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");

    private KubernetesNames() {
    }

    /** Why {@code key} is not a label key ({@code [prefix/]name}), or empty when it is one. */
    public static Optional<String> labelKeyProblem(String key) {
        if (key == null || key.isEmpty()) {
            return Optional.of("expected a label key such as topology.hetgpu.io/rack, got an empty one");
        }
        int slash = key.indexOf('/');
        return qualified(slash < 0 ? null : key.substring(0, slash), slash < 0 ? key : key.substring(slash + 1), key,
                "a label key such as topology.hetgpu.io/rack");
    }

    /** Why {@code name} is not an extended resource name ({@code domain/name}), or empty when it is one. */
    public static Optional<String> resourceNameProblem(String name) {
        if (name == null || name.indexOf('/') < 0) {
            return Optional.of("expected an extended resource name such as nvidia.com/gpu (a domain, '/', a name), got "
                    + Quote.of(name));
        }
        int slash = name.indexOf('/');
        var problem = qualified(name.substring(0, slash), name.substring(slash + 1), name, "an extended resource name such as nvidia.com/gpu");
        if (problem.isEmpty() && (name.startsWith("kubernetes.io/") || name.startsWith("requests."))) {
            return Optional.of("expected an extended resource name outside kubernetes.io (such as nvidia.com/gpu), got " + Quote.of(name));
        }
        return problem;
    }

    /** Why {@code name} cannot name a namespace (a DNS label of at most 63 characters), or empty when it can. */
    public static Optional<String> namespaceProblem(String name) {
        if (name == null || name.isEmpty() || name.length() > 63 || !DNS_LABEL.matcher(name).matches()) {
            return Optional.of("expected a namespace name (1 to 63 lower-case letters, digits or '-', starting and ending with a "
                    + "letter or digit), got " + Quote.of(name));
        }
        return Optional.empty();
    }

    private static Optional<String> qualified(String prefix, String name, String whole, String what) {
        var expected = "expected " + what + ": ";
        if (prefix != null && (prefix.isEmpty() || prefix.length() > 253 || !DNS_SUBDOMAIN.matcher(prefix).matches())) {
            return Optional.of(expected + "the part before '/' must be a DNS subdomain (lower-case letters, digits, '-' and '.', "
                    + "at most 253 characters), got " + Quote.of(whole));
        }
        if (name.isEmpty() || name.length() > 63 || !NAME.matcher(name).matches()) {
            return Optional.of(expected + "the name " + (prefix == null ? "" : "after '/' ") + "must be 1 to 63 letters, digits, "
                    + "'-', '_' or '.', starting and ending with a letter or digit, got " + Quote.of(whole));
        }
        return Optional.empty();
    }
}
