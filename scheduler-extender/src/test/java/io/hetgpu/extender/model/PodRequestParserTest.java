package io.hetgpu.extender.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PodRequestParserTest {

    private final PodRequestParser parser = new PodRequestParser("nvidia.com/gpu", CardCatalog.defaults());

    @Test
    void readsEverythingFromAKubeflowWorkerPod() throws Exception {
        var request = parser.parse(KubeJson.trainingPod());

        assertThat(request.displayName()).isEqualTo("ml-team/resnet-train-worker-1");
        assertThat(request.uid()).isEqualTo("5f3c2a8e-1b7d-4e2f-9a61-0c4d8e7f6b21");
        assertThat(request.gpuCount()).isEqualTo(4);
        assertThat(request.models()).containsExactlyInAnyOrder("V100", "A100");
        assertThat(request.minMemoryMiB()).isEqualTo(15360);
        assertThat(request.minComputeCapability()).isEqualTo(new ComputeCapability(7, 0));
        assertThat(request.requireNvlink()).isTrue();
        assertThat(request.specPriority()).isEqualTo(100000);
        assertThat(request.job()).isEqualTo("resnet-train");
        assertThat(request.role()).isEqualTo("worker");
        assertThat(request.claimNames()).containsExactly("imagenet-train");
        assertThat(request.preempts()).as("preemptionPolicy unset: PreemptLowerPriority").isTrue();
    }

    @Test
    void aPodWithPreemptionPolicyNeverIsOneKubeSchedulerWillNotPreemptFor() throws Exception {
        var pod = KubeJson.trainingPod();
        pod.getSpec().setPreemptionPolicy("Never");
        assertThat(parser.parse(pod).preempts()).isFalse();
        pod.getSpec().setPreemptionPolicy("PreemptLowerPriority");
        assertThat(parser.parse(pod).preempts()).isTrue();
    }

    @Test
    void aMalformedJobSizeIsRefusedWithThePodsOtherProblems() {
        var pod = KubeJson.trainingPod();
        pod.getMetadata().getAnnotations().put("hetgpu.io/job-size", "many");
        pod.getMetadata().getAnnotations().put("hetgpu.io/interconnect", "pcie");

        assertThatThrownBy(() -> parser.parse(pod)).isInstanceOf(InvalidPodRequestException.class)
                .hasMessageContaining("hetgpu.io/interconnect: expected")
                .hasMessageContaining("hetgpu.io/job-size: expected the job's member count, a whole number of at least 1, got \"many\"");
    }

    @Test
    void aHetgpuJobWinsOverKubeflowsAndARoleComesFromEither() throws Exception {
        var pod = KubeJson.trainingPod();
        pod.getMetadata().getLabels().put("hetgpu.io/job", "mine");
        assertThat(parser.parse(pod).job()).isEqualTo("mine");
        assertThat(parser.parse(pod).role()).isEqualTo("worker");
    }

    @Test
    void countsInitContainersByTheKubernetesRule() throws Exception {
        // Two app containers with 1 GPU each; a plain init container with 3 runs alone, before them.
        var pod = podWith(List.of(gpuContainer("init", 3, null)), gpuContainer("a", 1, null), gpuContainer("b", 1, null));
        assertThat(parser.gpuCount(pod)).isEqualTo(3);

        // A sidecar (restartPolicy Always) keeps running next to the app containers, so it adds.
        var sidecar = podWith(List.of(gpuContainer("sidecar", 1, "Always")), gpuContainer("a", 2, null));
        assertThat(parser.gpuCount(sidecar)).isEqualTo(3);
    }

    @Test
    void usesRequestsWhenNoLimitIsGiven() throws Exception {
        var container = new ContainerBuilder().withName("c").withNewResources()
                .addToRequests("nvidia.com/gpu", new Quantity("2")).endResources().build();
        assertThat(parser.gpuCount(podWith(List.of(), container))).isEqualTo(2);
    }

    @Test
    void aCpuPodNeedsNoGpus() throws Exception {
        var container = new ContainerBuilder().withName("c").withNewResources()
                .addToLimits("cpu", new Quantity("2")).endResources().build();
        var request = parser.parse(podWith(List.of(), container));
        assertThat(request.needsGpus()).isFalse();
        assertThat(request.models()).isEmpty();
    }

    @Test
    void readsPriorityAndPreferenceAnnotations() throws Exception {
        var request = parser.parse(annotated(Map.of("hetgpu.io/priority", "High", "hetgpu.io/gpu-preference", "oldest")));
        assertThat(request.priorityHint()).isEqualTo(PriorityHint.HIGH);
        assertThat(request.preference()).isEqualTo(GpuPreference.OLDEST);
    }

    @Test
    void rejectsBadAnnotationsQuotingEveryBadValue() {
        var pod = annotated(Map.of(
                "hetgpu.io/gpu-models", "A100,Z9000",
                "hetgpu.io/min-gpu-memory", "lots",
                "hetgpu.io/min-compute-capability", "seven",
                "hetgpu.io/interconnect", "infiniband",
                "hetgpu.io/priority", "urgent"));
        assertThatThrownBy(() -> parser.parse(pod))
                .isInstanceOf(InvalidPodRequestException.class)
                .hasMessageContaining("hetgpu.io/gpu-models: unknown card model \"Z9000\"")
                .hasMessageContaining("hetgpu.io/min-gpu-memory: expected a memory size such as \"32Gi\" or \"16000Mi\", got \"lots\"")
                .hasMessageContaining("hetgpu.io/min-compute-capability: expected MAJOR.MINOR such as \"7.0\", got \"seven\"")
                .hasMessageContaining("hetgpu.io/interconnect: expected \"nvlink\" or \"any\", got \"infiniband\"")
                .hasMessageContaining("hetgpu.io/priority: expected one of high, normal, low, got \"urgent\"");
    }

    @Test
    void rejectsAMemorySizeWithoutUnit() {
        assertThatThrownBy(() -> parser.parse(annotated(Map.of("hetgpu.io/min-gpu-memory", "32"))))
                .hasMessageContaining("got \"32\"");
    }

    @Test
    void rejectsAFractionalGpuCount() {
        var pod = podWith(List.of(), new ContainerBuilder().withName("c").withNewResources()
                .addToLimits("nvidia.com/gpu", new Quantity("500m")).endResources().build());
        assertThatThrownBy(() -> parser.parse(pod))
                .hasMessage("containers[c].resources.limits[nvidia.com/gpu]: expected a whole number of GPUs, got \"500m\"");
    }

    @ParameterizedTest
    @ValueSource(strings = {"65", "1e400", "99999999999999999999", "9223372036854775807"})
    void refusesACountBeyondAnyPodsNamingTheContainerAndTheValue(String count) {
        var pod = podWith(List.of(), new ContainerBuilder().withName("c").withNewResources()
                .addToLimits("nvidia.com/gpu", new Quantity(count)).endResources().build());
        assertThatThrownBy(() -> parser.parse(pod)).isInstanceOf(InvalidPodRequestException.class)
                .hasMessage("containers[c].resources.limits[nvidia.com/gpu]: at most 64 GPUs per pod, got \"" + count + "\"");
    }

    @Test
    void countsThatWouldWrapAroundTogetherAreRefusedOneByOne() {
        // Two counts near the largest long add up to a negative one: neither may reach the sum.
        var big = new Quantity("4611686018427387904");
        var pod = podWith(List.of(),
                new ContainerBuilder().withName("a").withNewResources().addToLimits("nvidia.com/gpu", big).endResources().build(),
                new ContainerBuilder().withName("b").withNewResources().addToLimits("nvidia.com/gpu", big).endResources().build());
        assertThatThrownBy(() -> parser.parse(pod)).isInstanceOf(InvalidPodRequestException.class)
                .hasMessageStartingWith("containers[a].resources.limits[nvidia.com/gpu]: at most 64 GPUs per pod");
    }

    @Test
    void normalisesModelNamesUsersWrite() throws Exception {
        var request = parser.parse(annotated(Map.of("hetgpu.io/gpu-models", "nvidia a100, Tesla V100-SXM2-32GB")));
        assertThat(request.models()).isEqualTo(Set.of("A100", "V100"));
    }

    @Test
    void readsTheWorkloadClass() throws Exception {
        assertThat(parser.parse(annotated(Map.of("hetgpu.io/workload", " resnet50 "))).workload()).isEqualTo("resnet50");
        assertThat(parser.parse(annotated(Map.of())).workload()).isEmpty();
    }

    private static Pod annotated(Map<String, String> annotations) {
        var pod = podWith(List.of(), gpuContainer("c", 1, null));
        pod.getMetadata().setAnnotations(annotations);
        return pod;
    }

    private static io.fabric8.kubernetes.api.model.Container gpuContainer(String name, int gpus, String restartPolicy) {
        return new ContainerBuilder().withName(name).withRestartPolicy(restartPolicy).withNewResources()
                .addToLimits("nvidia.com/gpu", new Quantity(Integer.toString(gpus))).endResources().build();
    }

    private static Pod podWith(List<io.fabric8.kubernetes.api.model.Container> init, io.fabric8.kubernetes.api.model.Container... containers) {
        return new PodBuilder().withNewMetadata().withName("p").withNamespace("default").endMetadata()
                .withNewSpec().withInitContainers(init).withContainers(containers).endSpec().build();
    }

    @Test
    void aWorkloadClassTheThroughputTableDoesNotListIsNamedInTheReason() throws Exception {
        var withTable = new PodRequestParser("nvidia.com/gpu", CardCatalog.defaults(), Set.of("resnet50", "recommendation"));
        var typo = KubeJson.trainingPod();
        typo.getMetadata().getAnnotations().put("hetgpu.io/workload", "resnet-50");

        assertThatThrownBy(() -> withTable.parse(typo)).isInstanceOf(InvalidPodRequestException.class)
                .hasMessage("hetgpu.io/workload: unknown workload class \"resnet-50\" (the throughput table lists: recommendation, resnet50)");

        typo.getMetadata().getAnnotations().put("hetgpu.io/workload", " ResNet50 ");
        assertThat(withTable.parse(typo).workload()).as("case and blanks do not matter, as in the table").isEqualTo("ResNet50");
        typo.getMetadata().getAnnotations().put("hetgpu.io/workload", "resnet-50");
        assertThat(parser.parse(typo).workload()).as("without a table the class has no effect").isEqualTo("resnet-50");
    }

    @Test
    void aLongValueIsQuotedCutWithItsLength() {
        var pod = KubeJson.trainingPod();
        pod.getMetadata().getAnnotations().put("hetgpu.io/gpu-models", "Z".repeat(20_000));
        pod.getMetadata().getAnnotations().put("hetgpu.io/priority", "p".repeat(250_000));

        assertThatThrownBy(() -> parser.parse(pod)).isInstanceOf(InvalidPodRequestException.class)
                .hasMessageContaining("in \"" + "Z".repeat(64) + "…\"(20000 bytes)")
                .hasMessageContaining("got \"" + "p".repeat(64) + "…\"(250000 bytes)")
                .satisfies(e -> assertThat(e.getMessage().length()).isLessThan(1_000));
    }
}
