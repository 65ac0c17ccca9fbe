package io.hetgpu.testcluster.explain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.math.BigDecimal;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Resource amounts in the files explain reads: what the API server would refuse is refused, naming field and value. */
class ResourceAmountsTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @ParameterizedTest
    @CsvSource({"2, 2", "+1, 1", "-1, -1", ".5, 0.5", "1., 1", "500m, 0.5", "1.5k, 1500", "2M, 2000000", "1E, 1000000000000000000",
            "16Gi, 17179869184", "1Ki, 1024", "1e3, 1000", "25E-1, 2.5"})
    void aQuantityIsTheAmountKubernetesReadsInIt(String quantity, BigDecimal amount) {
        assertThat(ResourceAmounts.parse(quantity)).isEqualByComparingTo(amount);
    }

    @ParameterizedTest
    @ValueSource(strings = {"two", "", "1.2.3", "Gi", "1e", "1 Gi", "1gi", "1KiB", "0x10", "1e99999999999"})
    void whatIsNotAQuantityIsNone(String text) {
        assertThat(ResourceAmounts.parse(text)).isNull();
    }

    @Test
    void aGpuCountInWordsIsRefusedNamingTheFieldInTheTemplateAndTheValue() {
        assertThatThrownBy(() -> ResourceAmounts.check("job.yaml: Job bert", yaml("""
                kind: Job
                spec:
                  template:
                    spec:
                      initContainers: [{name: fetch}]
                      containers:
                      - name: main
                        resources: {limits: {cpu: 4, nvidia.com/gpu: two}}
                """)))
                .isInstanceOf(WorkloadFiles.BadInput.class)
                .hasMessage("job.yaml: Job bert: spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: \"two\" is not a quantity"
                        + " (such as 2, 500m or 16Gi), as the API server would refuse it");
    }

    @Test
    void aFractionOfAGpuIsRefusedAsTheApiServerCountsDevicesWhole() {
        assertThatThrownBy(() -> ResourceAmounts.check("pod.yaml: Pod p", yaml("""
                spec: {containers: [{name: a}, {name: b, resources: {requests: {nvidia.com/gpu: 500m}, limits: {nvidia.com/gpu: 500m}}}]}
                """)))
                .hasMessageContaining("spec.containers[1].resources.requests[nvidia.com/gpu]: \"500m\" must be a whole number");
    }

    @Test
    void aGpuRequestBelowItsLimitIsRefusedAsExtendedResourcesAreNotOvercommitted() {
        assertThatThrownBy(() -> ResourceAmounts.check("pod.yaml: Pod p", yaml("""
                spec: {containers: [{name: a, resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: "2"}}}]}
                """)))
                .hasMessageContaining("spec.containers[0].resources.requests[nvidia.com/gpu]: \"1\" must equal its limit, 2");
    }

    @Test
    void aNegativeAmountIsRefused() {
        assertThatThrownBy(() -> ResourceAmounts.check("pod.yaml: Pod p", yaml("""
                spec: {containers: [{name: a, resources: {requests: {memory: -1Gi}}}]}
                """)))
                .hasMessageContaining("spec.containers[0].resources.requests[memory]: \"-1Gi\" must be 0 or more");
    }

    @Test
    void aClaimsStorageAndAVolumesCapacityAreAmountsToo() {
        assertThatThrownBy(() -> ResourceAmounts.check("data.yaml: PersistentVolumeClaim data", yaml("""
                spec: {resources: {requests: {storage: lots}}}
                """)))
                .hasMessageContaining("spec.resources.requests[storage]: \"lots\" is not a quantity");
        assertThatThrownBy(() -> ResourceAmounts.check("data.yaml: PersistentVolume pv", yaml("""
                spec: {capacity: {storage: {size: 1}}}
                """)))
                .hasMessageContaining("spec.capacity[storage]: \"{\"size\":1}\" is not a quantity");
    }

    @Test
    void whatTheApiServerStoresPasses() {
        assertThatCode(() -> ResourceAmounts.check("job.yaml: PyTorchJob p", yaml("""
                spec:
                  pytorchReplicaSpecs:
                    Worker:
                      template:
                        spec:
                          overhead: {cpu: 250m}
                          containers:
                          - name: w
                            resources:
                              requests: {cpu: 500m, memory: 16Gi, nvidia.com/gpu: 2, hugepages-2Mi: 1Gi}
                              limits: {cpu: "1", memory: 16Gi, nvidia.com/gpu: 2.0, example.kubernetes.io/fraction: 500m}
                """))).doesNotThrowAnyException();
    }

    private static JsonNode yaml(String text) throws Exception {
        return YAML.readTree(text);
    }
}
