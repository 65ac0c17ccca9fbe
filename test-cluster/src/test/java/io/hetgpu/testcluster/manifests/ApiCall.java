package io.hetgpu.testcluster.manifests;

import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.hetgpu.testcluster.api.ApiServer;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * A request to the API server in RBAC's terms, as the API server's request-info resolver makes them
 * out: verb (get, list, watch, create, update, patch, delete, deletecollection), API group, resource
 * (with its subresource as {@code pods/status}), and the namespace and name where the path has them.
 */
record ApiCall(String verb, String group, String resource, Optional<String> namespace, Optional<String> name) {

    /**
     * Whether the request is API discovery ({@code GET /api}, {@code /api/v1}, {@code /apis}, {@code /apis/GROUP},
     * {@code /apis/GROUP/VERSION}): a non-resource URL, which the default ClusterRole system:discovery allows every
     * authenticated user, so no role of hetgpu's grants it.
     */
    static boolean discovery(ApiServer.Request request) {
        var path = request.path().split("\\?")[0];
        var parts = Arrays.stream(path.split("/")).filter(p -> !p.isEmpty()).toList();
        return "GET".equals(request.method()) && !parts.isEmpty()
                && (parts.get(0).equals("api") && parts.size() <= 2 || parts.get(0).equals("apis") && parts.size() <= 3);
    }

    static ApiCall of(ApiServer.Request request) {
        String path = request.path();
        String query = "";
        int question = path.indexOf('?');
        if (question >= 0) {
            query = path.substring(question + 1);
            path = path.substring(0, question);
        }
        List<String> parts = Arrays.stream(path.split("/")).filter(p -> !p.isEmpty()).toList();
        List<String> rest;
        String group;
        if (parts.size() >= 2 && parts.get(0).equals("api")) {
            group = "";
            rest = parts.subList(2, parts.size());
        } else if (parts.size() >= 3 && parts.get(0).equals("apis")) {
            group = parts.get(1);
            rest = parts.subList(3, parts.size());
        } else {
            throw new AssertionError("not a resource request: " + request.method() + " " + request.path());
        }
        Optional<String> namespace = Optional.empty();
        // namespaces/NAME/RESOURCE...; a bare namespaces/NAME is the Namespace object itself.
        if (rest.size() >= 3 && rest.get(0).equals("namespaces")) {
            namespace = Optional.of(rest.get(1));
            rest = rest.subList(2, rest.size());
        }
        if (rest.isEmpty() || rest.size() > 3) {
            throw new AssertionError("cannot read resource of " + request.method() + " " + request.path());
        }
        Optional<String> name = rest.size() >= 2 ? Optional.of(rest.get(1)) : Optional.empty();
        String resource = rest.size() == 3 ? rest.get(0) + "/" + rest.get(2) : rest.get(0);
        String verb = switch (request.method()) {
            case "GET" -> name.isPresent() ? "get" : watches(query) ? "watch" : "list";
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> name.isPresent() ? "delete" : "deletecollection";
            default -> throw new AssertionError("unexpected method " + request.method() + " " + request.path());
        };
        return new ApiCall(verb, group, resource, namespace, name);
    }

    private static boolean watches(String query) {
        return Arrays.stream(query.split("&"))
                .map(p -> URLDecoder.decode(p, StandardCharsets.UTF_8))
                .anyMatch(p -> p.equals("watch=true") || p.equals("watch=1"));
    }

    /** Whether {@code rule} allows this call (RBAC's rule matching: "*" matches any value; resourceNames only named requests). */
    boolean allowedBy(PolicyRule rule) {
        return matches(rule.getVerbs(), verb) && matches(rule.getApiGroups(), group) && matches(rule.getResources(), resource)
                && (rule.getResourceNames() == null || rule.getResourceNames().isEmpty()
                        || name.isPresent() && rule.getResourceNames().contains(name.get()));
    }

    private static boolean matches(List<String> values, String value) {
        return values != null && (values.contains("*") || values.contains(value));
    }

    String describe() {
        return verb + " " + (group.isEmpty() ? "" : group + "/") + resource
                + namespace.map(ns -> " in " + ns).orElse("") + name.map(n -> " " + n).orElse("");
    }
}
