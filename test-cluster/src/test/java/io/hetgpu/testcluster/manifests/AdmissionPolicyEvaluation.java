package io.hetgpu.testcluster.manifests;

import dev.cel.common.CelValidationException;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A ValidatingAdmissionPolicy evaluated as the API server evaluates it, with CEL (Google's Java implementation of the
 * language the API server runs): its match conditions, then its variables, then each validation in order, the first that
 * fails denying the request with its message. Objects enter CEL as JSON does (maps, lists, strings, whole numbers as
 * int), so {@code has()}, {@code in} and {@code ==} behave as on the API server's unstructured objects.
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
     * An update as an authenticated caller makes it.
     *
     * @param username    {@code request.userInfo.username}
     * @param extra       {@code request.userInfo.extra}: a bound service-account token's pod and node names
     * @param subResource "" for the object itself, "status" for its status
     */
    record Update(String username, Map<String, List<String>> extra, String subResource, HasMetadata oldObject, HasMetadata object) {
    }

    private static final CelCompiler COMPILER = CelCompilerFactory.standardCelCompilerBuilder()
            .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
            .addVar("object", SimpleType.DYN).addVar("oldObject", SimpleType.DYN)
            .addVar("request", SimpleType.DYN).addVar("variables", SimpleType.DYN)
            .build();
    private static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder().build();

    private AdmissionPolicyEvaluation() {
    }

    static Outcome evaluate(ValidatingAdmissionPolicy policy, Update update) {
        var activation = new LinkedHashMap<String, Object>();
        activation.put("object", json(update.object()));
        activation.put("oldObject", json(update.oldObject()));
        var userInfo = new LinkedHashMap<String, Object>();
        userInfo.put("username", update.username());
        if (!update.extra().isEmpty()) {
            userInfo.put("extra", update.extra());
        }
        activation.put("request", Map.of("userInfo", userInfo, "subResource", update.subResource(), "operation", "UPDATE"));
        var variables = new LinkedHashMap<String, Object>();
        activation.put("variables", variables);
        var spec = policy.getSpec();
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

    private static Object eval(String expression, Map<String, Object> activation) {
        try {
            return RUNTIME.createProgram(COMPILER.compile(expression).getAst()).eval(activation);
        } catch (CelValidationException | CelEvaluationException e) {
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
