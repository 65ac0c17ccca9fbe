package io.hetgpu.extender.throughput;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class LearnedStateCodecTest {

    @Test
    void aStateIsWrittenAsSchemaOneAndReadBackEqual() {
        var state = new LearnedState(List.of(new LearnedState.ClassSamples("bert", List.of(new LearnedState.CardSamples("V100",
                List.of(new LearnedState.NamespaceSamples("team-a", List.of(10.5, 11.0))))))));
        var json = LearnedStateCodec.toJson(state);
        assertThat(json).isEqualTo("{\"schema\":1,\"classes\":[{\"class\":\"bert\",\"cards\":[{\"card\":\"V100\","
                + "\"namespaces\":[{\"namespace\":\"team-a\",\"gpus\":1,\"throughputs\":[10.5,11.0]}]}]}]}");
        assertThat(LearnedStateCodec.fromJson(json)).isEqualTo(state);
        assertThat(LearnedStateCodec.fromJson(LearnedStateCodec.toJson(LearnedState.EMPTY))).isEqualTo(LearnedState.EMPTY);
    }

    @Test
    void aSummarisedWindowCarriesTheRunsItStandsForAndComesBackAsAWindowWithItsMedian() {
        var summary = new LearnedState(List.of(new LearnedState.ClassSamples("bert", List.of(new LearnedState.CardSamples("V100",
                List.of(new LearnedState.NamespaceSamples("team-a", List.of(9.0, 10.0, 12.0), 2, 16)))))));
        var json = LearnedStateCodec.toJson(summary);
        assertThat(json).contains("{\"namespace\":\"team-a\",\"gpus\":2,\"runs\":16,\"throughputs\":[9.0,10.0,12.0]}");
        assertThat(LearnedStateCodec.fromJson(json)).isEqualTo(summary);

        var learner = new ThroughputLearner(LearningSettings.DEFAULTS);
        learner.restore(LearnedStateCodec.fromJson(json));
        var speed = learner.table().byClass().get("bert").get("V100");
        assertThat(speed.throughputPerGpu()).isEqualTo(10.0);
        assertThat(speed.samples()).isEqualTo(16);

        assertThatThrownBy(() -> LearnedStateCodec.fromJson(json.replace("\"runs\":16", "\"runs\":2")))
                .hasMessage("classes[0].cards[0].namespaces[0].runs: expected from 3 (the throughputs listed) to 1024, got \"2\"");
        assertThatThrownBy(() -> LearnedStateCodec.fromJson(json.replace("\"runs\":16", "\"runs\":\"many\"")))
                .hasMessage("classes[0].cards[0].namespaces[0].runs: expected from 3 (the throughputs listed) to 1024, got \"\"many\"\"");
    }

    @Test
    void aBadDocumentIsRefusedNamingTheFieldAndValue() {
        assertThatThrownBy(() -> LearnedStateCodec.fromJson("")).hasMessage("throughputs.json: empty");
        assertThatThrownBy(() -> LearnedStateCodec.fromJson("{")).hasMessageStartingWith("throughputs.json: not JSON");
        assertThatThrownBy(() -> LearnedStateCodec.fromJson("[]")).hasMessage("throughputs.json: expected an object");
        assertThatThrownBy(() -> LearnedStateCodec.fromJson("{\"schema\":2,\"classes\":[]}")).hasMessage("schema: expected 1, got \"2\"");
        assertThatThrownBy(() -> LearnedStateCodec.fromJson("{\"schema\":1}")).hasMessageStartingWith("classes: expected a list");
        assertThatThrownBy(() -> LearnedStateCodec.fromJson("{\"schema\":1,\"classes\":[{\"class\":\"bert\",\"cards\":[{\"card\":\"V100\","
                + "\"namespaces\":[{\"namespace\":\"a\",\"throughputs\":[1,-2]}]}]}]}"))
                .hasMessage("classes[0].cards[0].namespaces[0].throughputs[1]: expected a number above 0, got \"-2\"");
        assertThatThrownBy(() -> LearnedStateCodec.fromJson("{\"schema\":1,\"classes\":[{\"class\":\"bert\",\"cards\":[{\"card\":\"V100\","
                + "\"namespaces\":[{\"namespace\":\"a\",\"gpus\":3,\"throughputs\":[1]}]}]}]}"))
                .hasMessage("classes[0].cards[0].namespaces[0].gpus: expected 1, 2 or 5 (a size bucket), got \"3\"");
        assertThatThrownBy(() -> LearnedStateCodec.fromJson("{\"schema\":1,\"classes\":[{\"class\":7,\"cards\":[]}]}"))
                .hasMessageStartingWith("classes[0].class: expected a name");
        assertThatThrownBy(() -> LearnedStateCodec.fromJson(" ".repeat(LearnedStateCodec.MAX_CHARS + 1) + "{}"))
                .hasMessageContaining("at most 1048576");
        assertThatThrownBy(() -> LearnedStateCodec.fromJson("[".repeat(100) + "]".repeat(100))).hasMessageStartingWith("throughputs.json: not JSON");
    }
}
