package io.hetgpu.testcluster.manifests;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MatchCondition;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingAdmissionPolicySpec;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Mutation;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Variable;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.hetgpu.testcluster.manifests.AdmissionPolicyEvaluation.Request;
import dev.cel.runtime.CelRuntime;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A MutatingAdmissionPolicy evaluated as the API server evaluates it, in {@link AdmissionPolicyEvaluation}'s CEL
 * environment: its resource rules, its match conditions, its variables, then its one JSONPatch mutation. A mutation
 * of another patch type fails the test: hetgpu's policies write JSON patches.
 */
final class MutatingPolicyEvaluation {

    /** What the API server would do with one request. */
    sealed interface Outcome permits NotMatched, Mutated {
    }

    /** The policy does not apply: the object goes on as it came. */
    record NotMatched() implements Outcome {
    }

    /** The object after every mutation, as JSON. */
    record Mutated(JsonNode object) implements Outcome {
        <T extends HasMetadata> T as(Class<T> type) {
            return Serialization.jsonMapper().convertValue(object, type);
        }
    }

    private final MutatingAdmissionPolicySpec spec;
    private final Map<String, CelRuntime.Program> programs;

    private MutatingPolicyEvaluation(MutatingAdmissionPolicySpec spec) {
        this.spec = spec;
        if (spec.getMutations().size() != 1) {
            // Each mutation sees the object the one before left; hetgpu's policies have one, so this models one.
            throw new AssertionError(spec.getMutations().size() + " mutations: this model evaluates a policy of one");
        }
        for (var mutation : spec.getMutations()) {
            if (!"JSONPatch".equals(mutation.getPatchType())) {
                throw new AssertionError("mutation of patch type " + mutation.getPatchType() + " is not modelled here");
            }
        }
        this.programs = AdmissionPolicyEvaluation.compileAll(Stream.of(spec.getMatchConditions().stream().map(MatchCondition::getExpression),
                spec.getVariables().stream().map(Variable::getExpression),
                spec.getMutations().stream().map(m -> m.getJsonPatch().getExpression())).flatMap(s -> s));
    }

    static MutatingPolicyEvaluation of(MutatingAdmissionPolicy policy) {
        return new MutatingPolicyEvaluation(policy.getSpec());
    }

    Outcome evaluate(Request request) {
        if (!AdmissionPolicyEvaluation.matchesRules(spec.getMatchConstraints().getResourceRules(), request)) {
            return new NotMatched();
        }
        var activation = AdmissionPolicyEvaluation.activation(request);
        for (var condition : spec.getMatchConditions()) {
            if (!Boolean.TRUE.equals(AdmissionPolicyEvaluation.eval(programs, condition.getExpression(), activation))) {
                return new NotMatched();
            }
        }
        @SuppressWarnings("unchecked")
        var variables = (Map<String, Object>) activation.get("variables");
        for (var variable : spec.getVariables()) {
            variables.put(variable.getName(), AdmissionPolicyEvaluation.eval(programs, variable.getExpression(), activation));
        }
        JsonNode object = Serialization.jsonMapper().valueToTree(request.object());
        for (Mutation mutation : spec.getMutations()) {
            var patches = JsonPatches.operations(AdmissionPolicyEvaluation.eval(programs, mutation.getJsonPatch().getExpression(), activation));
            object = JsonPatches.apply(object, patches);
        }
        return new Mutated(object);
    }
}
