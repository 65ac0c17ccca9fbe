package io.hetgpu.deviceplugin.dra;

import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.KubernetesNames;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A ResourceClaim as kubelet names it in NodePrepareResources and NodeUnprepareResources. Its namespace and name come
 * from a pod author's claim, so they are checked before they reach a file name, an API path or a log line.
 */
public record ClaimRef(String namespace, String name, String uid) {

    /** A DNS subdomain, as a ResourceClaim's name is. */
    private static final Pattern NAME = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    /**
     * The API server's UIDs are UUIDs; anything of letters, digits, '-', '_' and '.' is taken, since the UID becomes part
     * of a CDI spec's file name and device names, which then hold no '/' and no other character CDI refuses.
     */
    private static final Pattern UID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

    public ClaimRef {
        namespace = namespace == null ? "" : namespace;
        name = name == null ? "" : name;
        uid = uid == null ? "" : uid;
    }

    /** Why kubelet's claim cannot be one the API server holds, naming the field and its value; empty when it can. */
    public Optional<String> problem() {
        var uidProblem = uidProblem();
        if (uidProblem.isPresent()) {
            return uidProblem;
        }
        var namespaceProblem = KubernetesNames.namespaceProblem(namespace);
        if (namespaceProblem.isPresent()) {
            return Optional.of("claim namespace: " + namespaceProblem.get());
        }
        if (name.isEmpty() || name.length() > 253 || !NAME.matcher(name).matches()) {
            return Optional.of("claim name: expected a DNS subdomain (lower-case letters, digits, '-' and '.', at most 253 "
                    + "characters), got " + Quote.of(name));
        }
        return Optional.empty();
    }

    /** Why the UID cannot name a claim's CDI spec; empty when it can. Unprepare needs the UID alone. */
    public Optional<String> uidProblem() {
        if (!UID.matcher(uid).matches()) {
            return Optional.of("claim uid: expected 1 to 128 letters, digits, '-', '_' or '.', got " + Quote.of(uid));
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return Quote.cut(namespace) + "/" + Quote.cut(name) + " (uid " + Quote.cut(uid) + ")";
    }
}
