package io.hetgpu.extender.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PreemptionCodecTest {

    private final PreemptionCodec codec = new PreemptionCodec();

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            a victim without metadata   | {"NodeNameToVictims":{"n1":{"Pods":[{"metadata":{"uid":"u1"}},{"spec":{}}]}}} | NodeNameToVictims[n1].Pods[1].metadata.uid: missing
            a victim without a UID      | {"NodeNameToVictims":{"n1":{"Pods":[{"metadata":{"name":"v"}}]}}}             | NodeNameToVictims[n1].Pods[0].metadata.uid: missing
            a null victim               | {"NodeNameToVictims":{"n1":{"Pods":[null]}}}                                   | NodeNameToVictims[n1].Pods[0].metadata.uid: missing
            a node's victims null       | {"NodeNameToVictims":{"n1":null}}                                              | NodeNameToVictims[n1]: expected the node's victims, got null
            a meta victim without a UID | {"NodeNameToMetaVictims":{"n2":{"Pods":[{"UID":""}]}}}                         | NodeNameToMetaVictims[n2].Pods[0].UID: missing
            """)
    void aVictimThatCannotBeToldFromTheOthersIsRefusedByWhereItIs(String what, String victims, String message) {
        var body = "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"uid\":\"p1\"}}," + victims.substring(1);

        assertThatThrownBy(() -> codec.read(body.getBytes(StandardCharsets.UTF_8))).isInstanceOf(WireFormatException.class)
                .hasMessage(message);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            whole victims      | {"NodeNameToVictims":{"n1":{"Pods":[{"metadata":{"uid":"u1"}}],"NumPDBViolations":1}}}
            victims by UID     | {"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u1"}]}}}
            a node with none   | {"NodeNameToVictims":{"n1":{"Pods":null}}}
            """)
    void victimsKnownByTheirUidsAreRead(String what, String victims) throws Exception {
        var body = "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"uid\":\"p1\"}}," + victims.substring(1);

        assertThat(codec.read(body.getBytes(StandardCharsets.UTF_8)).pod().getMetadata().getUid()).isEqualTo("p1");
    }
}
