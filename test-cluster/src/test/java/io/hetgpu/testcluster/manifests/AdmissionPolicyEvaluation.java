package io.hetgpu.testcluster.manifests;

import com.google.protobuf.NullValue;
import dev.cel.common.CelValidationException;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MatchCondition;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.NamedRuleWithOperations;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicySpec;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Variable;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A ValidatingAdmissionPolicy evaluated as the API server evaluates it, with CEL (Google's Java implementation of the
 * language the API server runs): its resource rules, then its match conditions, then its variables, then each
 * validation in order, the first that fails denying the request with its message. {@link MutatingPolicyEvaluation}
 * shares its environment. Objects enter CEL as JSON does (maps,
 * lists, strings, whole numbers as int), so {@code has()}, {@code in} and {@code ==} behave as on the API server's
 * unstructured objects; a create's {@code oldObject} is null, as there.
 */
final class AdmissionPolicyEvaluation {

    /** What the API server would do with one request. */
    sealed interface Outcome permits NotMatched, Allowed, Denied {
    }

    /** A match condition is false: the policy does not apply. */
    record NotMatched() implements Outcome {
    }

    record Allowed() implements Outcome {
    }

    /** The first failing validation's message, as the caller would read it. */
    record Denied(String message) implements Outcome {
    }

    /**
     * A write as an authenticated caller makes it.
     *
     * @param operation   CREATE, UPDATE or DELETE
     * @param resource    the resource as RBAC and the policy's rules name it: pods, nodes, bindings
     * @param subResource "" for the object itself, else status, binding, ...
     * @param username    {@code request.userInfo.username}
     * @param extra       {@code request.userInfo.extra}: a bound service-account token's pod and node names
     * @param oldObject   the stored object an update changes; null for a create
     * @param object      what the caller writes; null for a delete
     */
    record Request(String operation, String resource, String subResource, String username, Map<String, List<String>> extra,
            HasMetadata oldObject, HasMetadata object) {

        static Request create(String resource, String subResource, String username, HasMetadata object) {
            return new Request("CREATE", resource, subResource, username, Map.of(), null, object);
        }

        static Request update(String resource, String subResource, String username, HasMetadata oldObject, HasMetadata object) {
            return update(resource, subResource, username, Map.of(), oldObject, object);
        }

        static Request update(String resource, String subResource, String username, Map<String, List<String>> extra, HasMetadata oldObject,
                HasMetadata object) {
            return new Request("UPDATE", resource, subResource, username, extra, oldObject, object);
        }

        /** The API group, from the object's apiVersion: "" for the core group's v1, resource.k8s.io for resource.k8s.io/v1. */
        String group() {
            String apiVersion = written().getApiVersion();
            return apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
        }

        String version() {
            String apiVersion = written().getApiVersion();
            return apiVersion.substring(apiVersion.indexOf('/') + 1);
        }

        /** The object the request is about: a delete's is the stored one. */
        private HasMetadata written() {
            return object != null ? object : oldObject;
        }

        /** The resource and subresource as a policy's resource rules name them: pods, pods/status. */
        String ruleResource() {
            return subResource.isEmpty() ? resource : resource + "/" + subResource;
        }
    }

    /**
     * The API server's environment as far as hetgpu's policies use it: the standard library and macros, the strings
     * extension ({@code substring}), and a mutating policy's {@code JSONPatch} type.
     */
    private static final CelCompiler COMPILER = CelCompilerFactory.standardCelCompilerBuilder()
            .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
            .addLibraries(CelExtensions.strings())
            .addMessageTypes(JsonPatches.TYPE)
            .addVar("object", SimpleType.DYN).addVar("oldObject", SimpleType.DYN)
            .addVar("request", SimpleType.DYN).addVar("variables", SimpleType.DYN)
            .build();
    private static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder()
            .addLibraries(CelExtensions.strings())
            .addMessageTypes(JsonPatches.TYPE)
            .build();

    private final ValidatingAdmissionPolicySpec spec;
    /** Each expression of the policy, compiled once: a test evaluates hundreds of requests against one policy. */
    private final Map<String, CelRuntime.Program> programs;

    private AdmissionPolicyEvaluation(ValidatingAdmissionPolicySpec spec) {
        this.spec = spec;
        this.programs = compileAll(Stream.of(spec.getMatchConditions().stream().map(MatchCondition::getExpression),
                        spec.getVariables().stream().map(Variable::getExpression),
                        spec.getValidations().stream().flatMap(v -> Stream.of(v.getExpression(), v.getMessageExpression())))
                .flatMap(s -> s));
    }

    static AdmissionPolicyEvaluation of(ValidatingAdmissionPolicy policy) {
        return new AdmissionPolicyEvaluation(policy.getSpec());
    }

    Outcome evaluate(Request request) {
        if (!matchesRules(spec.getMatchConstraints().getResourceRules(), request)) {
            return new NotMatched();
        }
        var activation = activation(request);
        for (var condition : spec.getMatchConditions()) {
            if (!Boolean.TRUE.equals(eval(programs, condition.getExpression(), activation))) {
                return new NotMatched();
            }
        }
        @SuppressWarnings("unchecked")
        var variables = (Map<String, Object>) activation.get("variables");
        for (var variable : spec.getVariables()) {
            variables.put(variable.getName(), eval(programs, variable.getExpression(), activation));
        }
        for (var validation : spec.getValidations()) {
            if (!Boolean.TRUE.equals(eval(programs, validation.getExpression(), activation))) {
                var message = validation.getMessageExpression() != null ? String.valueOf(eval(programs, validation.getMessageExpression(), activation))
                        : validation.getMessage() != null ? validation.getMessage() : "failed expression: " + validation.getExpression();
                return new Denied(message);
            }
        }
        return new Allowed();
    }

    /**
     * The variables an expression sees: the object and the stored one as JSON holds them (a create's {@code oldObject}
     * null), the request's attributes, and an empty {@code variables} map the policy's variables go into, in order.
     */
    static Map<String, Object> activation(Request request) {
        var activation = new LinkedHashMap<String, Object>();
        activation.put("object", request.object() == null ? NullValue.NULL_VALUE : json(request.object()));
        activation.put("oldObject", request.oldObject() == null ? NullValue.NULL_VALUE : json(request.oldObject()));
        var userInfo = new LinkedHashMap<String, Object>();
        userInfo.put("username", request.username());
        if (!request.extra().isEmpty()) {
            userInfo.put("extra", request.extra());
        }
        activation.put("request", Map.of("userInfo", userInfo, "operation", request.operation(),
                "resource", Map.of("group", request.group(), "version", request.version(), "resource", request.resource()),
                "subResource", request.subResource()));
        activation.put("variables", new LinkedHashMap<String, Object>());
        return activation;
    }

    /** Whether a rule names the request's group, version, operation and resource. */
    static boolean matchesRules(List<NamedRuleWithOperations> rules, Request request) {
        return rules.stream().anyMatch(rule -> rule.getApiGroups().contains(request.group()) && rule.getApiVersions().contains(request.version())
                && rule.getOperations().contains(request.operation()) && rule.getResources().contains(request.ruleResource()));
    }

    /** Each distinct expression compiled once: a test evaluates hundreds of requests against one policy. */
    static Map<String, CelRuntime.Program> compileAll(Stream<String> expressions) {
        return expressions.filter(Objects::nonNull).distinct()
                .collect(Collectors.toUnmodifiableMap(e -> e, AdmissionPolicyEvaluation::compile));
    }

    private static CelRuntime.Program compile(String expression) {
        try {
            return RUNTIME.createProgram(COMPILER.compile(expression).getAst());
        } catch (CelValidationException | CelEvaluationException e) {
            throw new AssertionError("CEL expression " + expression + ": " + e.getMessage(), e);
        }
    }

    static Object eval(Map<String, CelRuntime.Program> programs, String expression, Map<String, Object> activation) {
        try {
            return programs.get(expression).eval(activation);
        } catch (CelEvaluationException e) {
            throw new AssertionError("CEL expression " + expression + ": " + e.getMessage(), e);
        }
    }

    /** The object as JSON holds it, numbers as CEL's int and double. */
    static Object json(HasMetadata object) {
        return cel(Serialization.jsonMapper().convertValue(object, Object.class));
    }

    private static Object cel(Object value) {
        return switch (value) {
            case Map<?, ?> map -> {
                var copy = new LinkedHashMap<String, Object>();
                map.forEach((key, item) -> copy.put(String.valueOf(key), cel(item)));
                yield copy;
            }
            case List<?> list -> {
                var copy = new ArrayList<Object>();
                list.forEach(item -> copy.add(cel(item)));
                yield copy;
            }
            case Integer i -> i.longValue();
            case Short s -> s.longValue();
            case BigInteger big -> big.longValueExact();
            case Float f -> f.doubleValue();
            case BigDecimal decimal -> decimal.doubleValue();
            case null, default -> value;
        };
    }
}
