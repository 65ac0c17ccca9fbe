package io.hetgpu.extender.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LabelSelectionTest {

    private static LabelSelection.Requirement requirement(String key, LabelSelection.Operator operator, String... values) {
        return new LabelSelection.Requirement(key, operator, Set.of(values));
    }

    @Test
    void everyPairAndEveryExpressionMustHold() {
        var selection = new LabelSelection(Map.of("app", "train"), List.of(
                requirement("tier", LabelSelection.Operator.IN, "gold", "silver"),
                requirement("canary", LabelSelection.Operator.DOES_NOT_EXIST),
                requirement("team", LabelSelection.Operator.EXISTS),
                requirement("zone", LabelSelection.Operator.NOT_IN, "b")));

        assertThat(selection.matches(Map.of("app", "train", "tier", "gold", "team", "ml"))).isTrue();
        assertThat(selection.matches(Map.of("app", "train", "tier", "gold", "team", "ml", "zone", "a"))).isTrue();
        assertThat(selection.matches(Map.of("app", "train", "tier", "gold", "team", "ml", "zone", "b"))).isFalse();
        assertThat(selection.matches(Map.of("app", "train", "tier", "bronze", "team", "ml"))).isFalse();
        assertThat(selection.matches(Map.of("app", "train", "tier", "gold"))).isFalse();
        assertThat(selection.matches(Map.of("app", "train", "tier", "gold", "team", "ml", "canary", ""))).isFalse();
        assertThat(selection.matches(Map.of("app", "serve", "tier", "gold", "team", "ml"))).isFalse();
    }

    @Test
    void anEmptyOrUnreadableSelectorSelectsNothing() {
        assertThat(new LabelSelection(Map.of(), List.of()).matches(Map.of("app", "x"))).isFalse();
        assertThat(LabelSelection.INVALID.matches(Map.of())).isFalse();
    }

    @Test
    void operatorsAreReadByTheirApiNamesOnly() {
        assertThat(LabelSelection.Operator.named("NotIn")).isEqualTo(LabelSelection.Operator.NOT_IN);
        assertThat(LabelSelection.Operator.named("notin")).isNull();
        assertThat(LabelSelection.Operator.named(null)).isNull();
    }
}
