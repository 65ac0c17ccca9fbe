package io.hetgpu.extender.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.extender.http.BindingCodec;
import io.hetgpu.extender.http.WireFormatException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The bind verb's bodies as k8s.io/kube-scheduler/extender/v1 has them: ExtenderBindingArgs {PodName, PodNamespace,
 * PodUID, Node} and ExtenderBindingResult {Error}, Go structs without JSON tags, so the keys are the field names.
 */
class ExtenderBindingWireTest {

    private final BindingCodec codec = new BindingCodec();

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void readsTheArgumentsKubeSchedulerSends() throws Exception {
        var args = codec.read(bytes("{\"PodName\":\"train-0\",\"PodNamespace\":\"ml\",\"PodUID\":\"6f1c-uid\",\"Node\":\"dgx-1\"}"));
        assertThat(args).isEqualTo(new ExtenderBindingArgs("train-0", "ml", "6f1c-uid", "dgx-1"));
    }

    @Test
    void readsKeysInAnyCaseAsGosDecoderDoes() throws Exception {
        var args = codec.read(bytes("{\"podName\":\"train-0\",\"podnamespace\":\"ml\",\"PODUID\":\"u\",\"node\":\"dgx-1\",\"Extra\":1}"));
        assertThat(args).isEqualTo(new ExtenderBindingArgs("train-0", "ml", "u", "dgx-1"));
    }

    @Test
    void writesTheResultWithGosFieldNameAlwaysPresent() {
        assertThat(new String(codec.write(ExtenderBindingResult.BOUND), StandardCharsets.UTF_8)).isEqualTo("{\"Error\":\"\"}");
        assertThat(new String(codec.write(new ExtenderBindingResult("pod gone")), StandardCharsets.UTF_8)).isEqualTo("{\"Error\":\"pod gone\"}");
        assertThat(new ExtenderBindingResult(null).bound()).isTrue();
    }

    @Test
    void refusesABodyThatIsNotBindingArgs() {
        assertThatThrownBy(() -> codec.read(bytes("[1,2]"))).isInstanceOf(WireFormatException.class)
                .hasMessageStartingWith("request body is not valid ExtenderBindingArgs JSON");
        assertThatThrownBy(() -> codec.read(bytes("null"))).isInstanceOf(WireFormatException.class).hasMessageContaining("PodName");
    }
}
