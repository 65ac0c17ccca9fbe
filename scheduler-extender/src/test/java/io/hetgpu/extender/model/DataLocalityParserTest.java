package io.hetgpu.extender.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import org.junit.jupiter.api.Test;

class DataLocalityParserTest {

    @Test
    void readsNodesRacksAndZones() {
        var locality = DataLocalityParser.parse("node=n1,n2; rack=r1 zone=z1");
        assertThat(locality.nodes()).isEqualTo(Set.of("n1", "n2"));
        assertThat(locality.racks()).isEqualTo(Set.of("r1"));
        assertThat(locality.zones()).isEqualTo(Set.of("z1"));
    }

    @Test
    void rejectsUnknownClausesQuotingTheValue() {
        assertThatThrownBy(() -> DataLocalityParser.parse("datacenter=dc1"))
                .hasMessage("hetgpu.io/data-locality: expected clauses node=…, rack=… or zone=…, got \"datacenter=dc1\"");
    }
}
