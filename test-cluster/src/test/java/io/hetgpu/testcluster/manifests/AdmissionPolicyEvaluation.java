package io.hetgpu.testcluster.manifests;

import com.google.protobuf.NullValue;
import dev.cel.common.CelValidationException;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
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
 * validation in order, the first that fails denying the request with its message. Objects enter CEL as JSON does (maps,
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
     * @param operation   CREATE or UPDATE
     * @param resource    the resource as RBAC and the policy's rules name it: pods, nodes, bindings
     * @param subResource "" for the object itself, else status, binding, ...
     * @param username    {@code request.userInfo.username}
     * @param extra       {@code request.userInfo.extra}: a bound service-account token's pod and node names
     * @param oldObject   the stored object an update changes; null for a create
     * @param object      what the caller writes
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

        /** The resource and subresource as a policy's resource rules name them: pods, pods/status. */
        String ruleResource() {
            return subResource.isEmpty() ? resource : resource + "/" + subResource;
        }
    }

    private static final CelCompiler COMPILER = CelCompilerFactory.standardCelCompilerBuilder()
            .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
            .addVar("object", SimpleType.DYN).addVar("oldObject", SimpleType.DYN)
            .addVar("request", SimpleType.DYN).addVar("variables", SimpleType.DYN)
            .build();
    private static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder().build();

    private final ValidatingAdmissionPolicySpec spec;
    /** Each expression of the policy, compiled once: a test evaluates hundreds of requests against one policy. */
    private final Map<String, CelRuntime.Program> programs;

    private AdmissionPolicyEvaluation(ValidatingAdmissionPolicySpec spec) {
        this.spec = spec;
        var expressions = Stream.of(spec.getMatchConditions().stream().map(MatchCondition::getExpression),
                        spec.getVariables().stream().map(Variable::getExpression),
                        spec.getValidations().stream().flatMap(v -> Stream.of(v.getExpression(), v.getMessageExpression())))
                .flatMap(s -> s).filter(Objects::nonNull).distinct();
        this.programs = expressions.collect(Collectors.toUnmodifiableMap(e -> e, AdmissionPolicyEvaluation::compile));
    }

    static AdmissionPolicyEvaluation of(ValidatingAdmissionPolicy policy) {
        return new AdmissionPolicyEvaluation(policy.getSpec());
    }

    Outcome evaluate(Request request) {
        if (!matchesRules(spec.getMatchConstraints().getResourceRules(), request)) {
            return new NotMatched();
        }
        var activation = new LinkedHashMap<String, Object>();
        activation.put("object", json(request.object()));
        activation.put("oldObject", request.oldObject() == null ? NullValue.NULL_VALUE : json(request.oldObject()));
        var userInfo = new LinkedHashMap<String, Object>();
        userInfo.put("username", request.username());
        if (!request.extra().isEmpty()) {
            userInfo.put("extra", request.extra());
        }
        activation.put("request", Map.of("userInfo", userInfo, "operation", request.operation(),
                "resource", Map.of("group", "", "version", "v1", "resource", request.resource()), "subResource", request.subResource()));
        var variables = new LinkedHashMap<String, Object>();
        activation.put("variables", variables);
        for (var condition : spec.getMatchConditions()) {
            if (!Boolean.TRUE.equals(eval(condition.getExpression(), activation))) {
                return new NotMatched();
            }
        }
        for (var variable : spec.getVariables()) {
            variables.put(variable.getName(), eval(variable.getExpression(), activation));
        }
        for (var validation : spec.getValidations()) {
            if (!Boolean.TRUE.equals(eval(validation.getExpression(), activation))) {
                var message = validation.getMessageExpression() != null ? String.valueOf(eval(validation.getMessageExpression(), activation))
                        : validation.getMessage() != null ? validation.getMessage() : "failed expression: " + validation.getExpression();
                return new Denied(message);
            }
        }
        return new Allowed();
    }

    /** Whether a rule names the request's operation and resource (the core group's v1, as every rule here). */
    private static boolean matchesRules(List<NamedRuleWithOperations> rules, Request request) {
        return rules.stream().anyMatch(rule -> rule.getApiGroups().contains("") && rule.getApiVersions().contains("v1")
                && rule.getOperations().contains(request.operation()) && rule.getResources().contains(request.ruleResource()));
    }

    private static CelRuntime.Program compile(String expression) {
        try {
            return RUNTIME.createProgram(COMPILER.compile(expression).getAst());
        } catch (CelValidationException | CelEvaluationException e) {
            throw new AssertionError("CEL expression " + expression + ": " + e.getMessage(), e);
        }
    }

    private Object eval(String expression, Map<String, Object> activation) {
        try {
            return programs.get(expression).eval(activation);
        } catch (CelEvaluationException e) {
            throw new AssertionError("CEL expression " + expression + ": " + e.getMessage(), e);
        }
    }

    /** The object as JSON holds it, numbers as CEL's int and double. */
    private static Object json(HasMetadata object) {
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
