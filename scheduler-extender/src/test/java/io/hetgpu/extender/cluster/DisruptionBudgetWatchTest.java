package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.hetgpu.extender.model.LabelSelection;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A PodDisruptionBudget read as the eviction floor weighs it, and selectors the API server's conversion would refuse. */
class DisruptionBudgetWatchTest {

    @Test
    void aBudgetIsReadWithItsSelectorAllowanceAndDisruptedPods() {
        var budget = DisruptionBudgetWatch.budget(new PodDisruptionBudgetBuilder().withNewMetadata().withName("guard").withNamespace("ml")
                .endMetadata().withNewSpec().withMinAvailable(new IntOrString(2)).withSelector(new LabelSelectorBuilder()
                        .withMatchLabels(Map.of("app", "train")).withMatchExpressions(new LabelSelectorRequirementBuilder().withKey("tier")
                                .withOperator("In").withValues("gold").build()).build()).endSpec()
                .withNewStatus().withDisruptionsAllowed(1).withDisruptedPods(Map.of("train-0", "2026-11-28T10:00:00Z")).endStatus().build());

        assertThat(budget.namespace()).isEqualTo("ml");
        assertThat(budget.disruptionsAllowed()).isEqualTo(1);
        assertThat(budget.disruptedPods()).containsExactly("train-0");
        assertThat(budget.selector().matches(Map.of("app", "train", "tier", "gold"))).isTrue();
        assertThat(budget.selector().matches(Map.of("app", "train"))).isFalse();
    }

    @Test
    void aBudgetWithoutStatusAllowsNothingAndOneWithoutSpecSelectsNothing() {
        var bare = DisruptionBudgetWatch.budget(new PodDisruptionBudgetBuilder().withNewMetadata().withName("b").withNamespace("ml").endMetadata().build());

        assertThat(bare.disruptionsAllowed()).isZero();
        assertThat(bare.selector()).isEqualTo(LabelSelection.INVALID);
    }

    @Test
    void selectorsTheApiServerWouldNotConvertSelectNothing() {
        var unknownOperator = new LabelSelectorBuilder().withMatchExpressions(new LabelSelectorRequirementBuilder().withKey("app")
                .withOperator("Matches").withValues("x").build()).build();
        var inWithoutValues = new LabelSelectorBuilder().withMatchExpressions(new LabelSelectorRequirementBuilder().withKey("app")
                .withOperator("In").build()).build();
        var existsWithValues = new LabelSelectorBuilder().withMatchExpressions(new LabelSelectorRequirementBuilder().withKey("app")
                .withOperator("Exists").withValues("x").build()).build();

        assertThat(DisruptionBudgetWatch.selection(unknownOperator)).isEqualTo(LabelSelection.INVALID);
        assertThat(DisruptionBudgetWatch.selection(inWithoutValues)).isEqualTo(LabelSelection.INVALID);
        assertThat(DisruptionBudgetWatch.selection(existsWithValues)).isEqualTo(LabelSelection.INVALID);
        assertThat(DisruptionBudgetWatch.selection(null)).isEqualTo(LabelSelection.INVALID);
    }
}
