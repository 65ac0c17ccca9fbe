package io.hetgpu.extender.model;

import static io.hetgpu.extender.TestDra.NVIDIA;
import static io.hetgpu.extender.TestDra.claim;
import static io.hetgpu.extender.TestDra.exactly;
import static io.hetgpu.extender.TestDra.firstAvailable;
import static io.hetgpu.extender.TestDra.nvidiaClass;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.hetgpu.extender.TestDra;
import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A pod's GPU request read from its claims, mapped to the fields every filter reads. */
class ClaimRequestReaderTest {

    private final CardCatalog catalog = CardCatalog.defaults();

    @Test
    void aNamedClaimOfNvidiasClassAsksItsCountOfAnyGpu() throws Exception {
        var request = parse(pod("train", "gpus"), List.of(claim("ml", "gpus", exactly("gpus", NVIDIA, 4))), List.of(nvidiaClass()));

        assertThat(request.gpuCount()).isEqualTo(4);
        assertThat(request.cards().isAny()).isTrue();
        assertThat(request.claimNote()).isEmpty();
    }

    @Test
    void aClaimMadeFromATemplateIsFoundThroughThePodsStatus() throws Exception {
        var pod = new PodBuilder(pod("train", null)).editSpec().withResourceClaims(new PodResourceClaimBuilder().withName("gpus")
                .withResourceClaimTemplateName("four-gpus").build()).endSpec()
                .withNewStatus().withResourceClaimStatuses(new PodResourceClaimStatusBuilder().withName("gpus")
                        .withResourceClaimName("train-gpus-x7k2p").build()).endStatus().build();

        var request = parse(pod, List.of(claim("ml", "train-gpus-x7k2p", exactly("gpus", NVIDIA, 2))), List.of(nvidiaClass()));

        assertThat(request.gpuCount()).isEqualTo(2);
        var notYet = new PodBuilder(pod).withStatus(null).build();
        var unmade = parse(notYet, List.of(), List.of(nvidiaClass()));
        assertThat(unmade.gpuCount()).isZero();
        assertThat(unmade.claimNote()).contains("resourceClaims[\"gpus\"]: its claim is not created yet");
    }

    @Test
    void eachSelectorShapeMapsToTheCardsItAsks() throws Exception {
        assertThat(cards("device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA A100-SXM4-40GB\"").models()).containsExactly("A100");
        assertThat(cards("device.attributes['gpu.nvidia.com'].productName in ['NVIDIA A100-SXM4-80GB', 'NVIDIA H100 80GB HBM3']").models())
                .containsExactly("A100", "H100");
        assertThat(cards("device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB' "
                + "|| device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'").models()).containsExactly("A100", "H100");
        assertThat(cards("device.attributes[\"gpu.nvidia.com\"].architecture == \"Hopper\"").models())
                .containsExactlyInAnyOrder("H100", "H800", "H200", "GH200");
        assertThat(cards("device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0").minMemoryMiB()).isEqualTo(40 * 1024);
        assertThat(cards("device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('16Gi'))").minMemoryMiB()).isEqualTo(16 * 1024);
        assertThat(cards("device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('8.0.0')) >= 0").minComputeCapability())
                .isEqualTo(new ComputeCapability(8, 0));
        assertThat(cards("device.attributes['gpu.hetgpu.io'].model == 'V100'").models()).containsExactly("V100");
        var both = cards("(device.attributes['gpu.nvidia.com'].architecture == 'Ampere') && "
                + "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0");
        assertThat(both.models()).contains("A100");
        assertThat(both.minMemoryMiB()).isEqualTo(80 * 1024);
    }

    @Test
    void aSelectorOfAnotherShapeIsNotReadAndTheNoteSaysSoWithoutRefusingAnything() throws Exception {
        var request = parse(pod("train", "gpus"), List.of(claim("ml", "gpus", exactly("gpus", NVIDIA, 2,
                "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA A')",
                "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"))), List.of(nvidiaClass()));

        assertThat(request.gpuCount()).isEqualTo(2);
        assertThat(request.models()).as("nothing refused for what was not read").isEmpty();
        assertThat(request.minMemoryMiB()).as("the clause that was read still counts").isEqualTo(40 * 1024);
        assertThat(request.claimNote()).contains("requests[\"gpus\"]: \"device.attributes['gpu.nvidia.com'].productName.startsWith(")
                .contains("(unknown shape) not read, left to kube-scheduler");
    }

    @Test
    void anAttributeOfAnotherDomainIsNotReadAndSaidSo() throws Exception {
        var request = parse(pod("train", "gpus"), List.of(claim("ml", "gpus", exactly("gpus", NVIDIA, 2,
                "device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:00'"))), List.of(nvidiaClass()));

        assertThat(request.gpuCount()).isEqualTo(2);
        assertThat(request.cards().isAny()).isTrue();
        assertThat(request.claimNote()).contains("(attribute of another domain) not read, left to kube-scheduler");
    }

    @Test
    void firstAvailableIsReadAsTheLeastOfItsAlternativesAndSaysSo() throws Exception {
        var request = parse(pod("train", "gpus"), List.of(claim("ml", "gpus", firstAvailable("gpus", NVIDIA,
                8, "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'",
                4, "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"))), List.of(nvidiaClass()));

        assertThat(request.gpuCount()).isEqualTo(4);
        assertThat(request.models()).containsExactly("H100", "A100");
        assertThat(request.claimNote()).contains("firstAvailable read as the least of its 2 subrequests (4 GPUs, H100 or A100)");
        var anyModel = parse(pod("train", "gpus"), List.of(claim("ml", "gpus", firstAvailable("gpus", NVIDIA,
                2, "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'", 2, ""))), List.of(nvidiaClass()));
        assertThat(anyModel.models()).isEmpty();
    }

    static ResourceClaim hetgpusClaim(String name, int gpus, List<Integer> tiers) {
        return TestDra.hetgpuClaim("ml", name, gpus, tiers);
    }

    private List<Integer> tiersNewestFirst() {
        return catalog.cards().stream().map(io.hetgpu.gpu.tier.KnownCard::rank).distinct().sorted(java.util.Comparator.reverseOrder()).toList();
    }

    @Test
    void hetgpusClaimAsksItsCountOnNvlinkAndAnyTierItLists() throws Exception {
        var tiers = tiersNewestFirst();
        var request = parse(pod("train", "gpus"), List.of(hetgpusClaim("gpus", 4, tiers)), List.of(TestDra.hetgpuClass()));

        assertThat(request.gpuCount()).isEqualTo(4);
        assertThat(request.requireNvlink()).as("matchAttribute gpu.hetgpu.io/nvlinkSet4 over all its GPUs").isTrue();
        assertThat(request.cards().minTier().rank()).as("any tier listed, the oldest too").isEqualTo(tiers.getLast());
        assertThat(request.cards().models()).isEmpty();
        assertThat(request.claimNote()).contains("firstAvailable read as the least of its " + tiers.size() + " subrequests (4 GPUs, any model, tier "
                + tiers.getLast() + " or newer)").doesNotContain("not read");

        var topTwo = parse(pod("train", "gpus"), List.of(hetgpusClaim("gpus", 1, tiers.subList(0, 2))), List.of(TestDra.hetgpuClass()));
        assertThat(topTwo.cards().minTier().rank()).as("not only the first subrequest's tier").isEqualTo(tiers.get(1));
        assertThat(topTwo.requireNvlink()).as("one GPU, no constraint").isFalse();
        var oldestFirst = parse(pod("train", "gpus"), List.of(hetgpusClaim("gpus", 4, tiers.reversed())), List.of(TestDra.hetgpuClass()));
        assertThat(oldestFirst.cards()).as("the order is a preference: the same cards either way").isEqualTo(request.cards());
    }

    /**
     * hetgpu's shipped 2-GPU low-priority template binds its NVLink constraint by name to each generation's first
     * alternative ({@code <band>-nvlink}), not to the same band's second: a set preferred, not required, so the extender
     * filters no node for lacking one.
     */
    @Test
    void anNvlinkConstraintThatLeavesAnAlternativeFreeIsNotRequired() throws Exception {
        var text = java.nio.file.Files.readString(java.nio.file.Path.of("..", "manifests", "components", "dra-claim-templates",
                "claim-templates.yaml"));
        var template = java.util.Arrays.stream(text.split("\n---\n")).filter(d -> d.contains("kind: ResourceClaimTemplate"))
                .map(d -> io.fabric8.kubernetes.client.utils.Serialization.unmarshal(d, io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate.class))
                .filter(t -> t.getMetadata().getName().equals("hetgpu-gpus-2-low")).findFirst().orElseThrow();
        var shipped = new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder().withNewMetadata().withNamespace("ml").withName("gpus")
                .endMetadata().withSpec(template.getSpec().getSpec()).build();
        assertThat(shipped.getSpec().getDevices().getConstraints()).as("the shipped template binds some alternatives").singleElement()
                .satisfies(c -> assertThat(c.getRequests()).hasSize(4).allSatisfy(r -> assertThat(r).startsWith("gpus/").endsWith("-nvlink")));

        var request = parse(pod("sweep", "gpus"), List.of(shipped), List.of(TestDra.hetgpuClass()));

        assertThat(request.gpuCount()).isEqualTo(2);
        assertThat(request.requireNvlink()).as("each band's plain twin is bound by no constraint").isFalse();
        assertThat(request.cards().isAny()).isTrue();
        assertThat(request.claimNote()).contains("binds only some alternatives of the claim's GPU requests: an NVLink set preferred, not required")
                .doesNotContain("not read");
        // The same constraint over every alternative is required.
        var everyAlternative = new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder(shipped).editSpec().editDevices()
                .editFirstConstraint().withRequests("gpus").endConstraint().endDevices().endSpec().build();
        assertThat(parse(pod("sweep", "gpus"), List.of(everyAlternative), List.of(TestDra.hetgpuClass())).requireNvlink()).isTrue();
    }

    @Test
    void tierClausesOfEachShapeReadAsALeastTier() throws Exception {
        var a100 = catalog.tierOf("A100", ComputeCapability.parse("8.0"), 0).rank();
        assertThat(cards("device.attributes['gpu.hetgpu.io'].tier >= " + a100).minTier().rank()).isEqualTo(a100);
        assertThat(cards("device.attributes['gpu.hetgpu.io'].tier >= " + a100).minTier().model()).isEqualTo("A100");
        assertThat(cards("device.attributes['gpu.hetgpu.io'].tier > " + a100).minTier().rank()).isEqualTo(a100 + 1);
        assertThat(cards("device.attributes['gpu.hetgpu.io'].tier in [" + (a100 + 5) + ", " + a100 + "]").minTier().rank()).isEqualTo(a100);
        assertThat(cards("device.attributes['gpu.hetgpu.io'].tier == " + (a100 + 5) + " || device.attributes['gpu.hetgpu.io'].tier == " + a100)
                .minTier().rank()).isEqualTo(a100);
        assertThat(cards("device.attributes[\"gpu.hetgpu.io\"].tier >= 84 && device.attributes[\"gpu.hetgpu.io\"].tier <= 99").minTier().rank())
                .as("a band: its floor; the ceiling only narrows what kube-scheduler allocates").isEqualTo(84);
        assertThat(cards("device.attributes[\"gpu.hetgpu.io\"].tier <= 24").minTier()).isEqualTo(io.hetgpu.gpu.tier.CardRequirements.ANY_TIER);
        var other = parse(pod("train", "gpus"), List.of(claim("ml", "gpus", exactly("gpus", TestDra.HETGPU, 1,
                "device.attributes['gpu.hetgpu.io'].numaNode == 0", "device.attributes['gpu.hetgpu.io'].tier == 99999999"))),
                List.of(TestDra.hetgpuClass()));
        assertThat(other.cards().minTier().rank()).as("a tier past any card's is not read").isZero();
        assertThat(other.claimNote()).contains("numaNode not read").contains("a tier above any card's");
    }

    @Test
    void anNvlinkConstraintOnPartOfThePodsGpusIsLeftToKubeScheduler() throws Exception {
        var twoRequests = TestDra.onOneNvlinkSet(claim("ml", "gpus", exactly("a", TestDra.HETGPU, 2), exactly("b", TestDra.HETGPU, 2)), 2, "a");
        var partial = parse(pod("train", "gpus"), List.of(twoRequests), List.of(TestDra.hetgpuClass()));
        assertThat(partial.gpuCount()).isEqualTo(4);
        assertThat(partial.requireNvlink()).isFalse();
        assertThat(partial.claimNote()).contains("binds only some of the claim's GPU requests");

        var both = TestDra.onOneNvlinkSet(claim("ml", "gpus", exactly("a", TestDra.HETGPU, 2), exactly("b", TestDra.HETGPU, 2)), 4, "a", "b");
        assertThat(parse(pod("train", "gpus"), List.of(both), List.of(TestDra.hetgpuClass())).requireNvlink()).isTrue();

        var twoClaims = new PodBuilder(pod("train", "gpus")).editSpec().addNewResourceClaim().withName("more").withResourceClaimName("more")
                .endResourceClaim().endSpec().build();
        var apart = parse(twoClaims, List.of(hetgpusClaim("gpus", 2, tiersNewestFirst()), hetgpusClaim("more", 2, tiersNewestFirst())),
                List.of(TestDra.hetgpuClass()));
        assertThat(apart.gpuCount()).isEqualTo(4);
        assertThat(apart.requireNvlink()).as("each claim on its own set: not 4 GPUs on one").isFalse();
        assertThat(apart.claimNote()).contains("binds one claim's GPUs, not all the pod asks");

        var alsoLimits = new PodBuilder(pod("train", "gpus")).editSpec().editFirstContainer().editOrNewResources()
                .addToLimits("nvidia.com/gpu", new Quantity("2")).endResources().endContainer().endSpec().build();
        var beside = parse(alsoLimits, List.of(hetgpusClaim("gpus", 2, tiersNewestFirst())), List.of(TestDra.hetgpuClass()));
        assertThat(beside.gpuCount()).isEqualTo(4);
        assertThat(beside.requireNvlink()).as("the limit's GPUs are bound by no claim").isFalse();

        var foreign = new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder(claim("ml", "gpus", exactly("gpus", TestDra.HETGPU, 2)))
                .editSpec().editDevices().addNewConstraint().withMatchAttribute("example.com/rack").endConstraint().endDevices().endSpec().build();
        assertThat(parse(pod("train", "gpus"), List.of(foreign), List.of(TestDra.hetgpuClass())).requireNvlink()).isFalse();
    }

    @Test
    void hostileConstraintsAreBoundedAndNeverThrow() throws Exception {
        var names = java.util.stream.IntStream.range(0, 5_000).mapToObj(i -> "r" + i).toList();
        var huge = "x".repeat(100_000);
        var constraints = java.util.stream.IntStream.range(0, 40).mapToObj(i -> new io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint(
                null, i % 2 == 0 ? huge : "gpu.hetgpu.io/nvlinkSet2", names)).toList();
        var builder = new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder(claim("ml", "gpus", exactly("gpus", TestDra.HETGPU, 2)))
                .editSpec().editDevices().withConstraints(constraints).endDevices().endSpec();
        var request = parse(pod("train", "gpus"), List.of(builder.build()), List.of(TestDra.hetgpuClass()));

        assertThat(request.gpuCount()).isEqualTo(2);
        assertThat(request.requireNvlink()).isFalse();
        assertThat(request.claimNote()).contains("constraints past the first " + ClaimRequestReader.MAX_CONSTRAINTS + " not read")
                .hasSizeLessThan(10_000);
    }

    @Test
    void requestsOfOtherDevicesCountNoGpu() throws Exception {
        var nic = TestDra.deviceClass("rdma.example.com", null, "device.driver == 'rdma.example.com'");
        var mig = TestDra.deviceClass("mig.nvidia.com", null, "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'");
        var request = parse(pod("train", "devices"), List.of(claim("ml", "devices", exactly("nic", "rdma.example.com", 1),
                exactly("slice", "mig.nvidia.com", 2), exactly("gpus", NVIDIA, 1))), List.of(nvidiaClass(), nic, mig));

        assertThat(request.gpuCount()).isEqualTo(1);
    }

    @Test
    void aPlainGpuLimitServedByADeviceClassTakesTheClassesCards() throws Exception {
        var served = TestDra.deviceClass("a100s", "nvidia.com/gpu", TestDra.NVIDIA_CLASS_SELECTOR,
                "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-40GB'");
        var pod = new PodBuilder(pod("train", null)).editSpec().editFirstContainer().editOrNewResources()
                .addToLimits("nvidia.com/gpu", new Quantity("2")).endResources().endContainer().endSpec().build();

        var request = parse(pod, List.of(), List.of(served));

        assertThat(request.gpuCount()).as("counted once, by the limit").isEqualTo(2);
        assertThat(request.models()).containsExactly("A100");
    }

    @Test
    void aClassesOwnExtendedResourceIsAGpuRequestCountedAsAnyResourceIs() throws Exception {
        var a100s = TestDra.deviceClass("a100s", null, TestDra.NVIDIA_CLASS_SELECTOR,
                "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-40GB'");
        var pod = new PodBuilder(pod("train", null)).editSpec()
                .addNewInitContainer().withName("warm-up").withImage("t").withNewResources()
                .addToLimits("deviceclass.resource.kubernetes.io/a100s", new Quantity("3")).endResources().endInitContainer()
                .editFirstContainer().editOrNewResources().addToLimits("deviceclass.resource.kubernetes.io/a100s", new Quantity("2"))
                .endResources().endContainer().endSpec().build();

        var request = parse(pod, List.of(), List.of(a100s));

        assertThat(request.gpuCount()).as("the init container's 3 before the app's 2").isEqualTo(3);
        assertThat(request.models()).containsExactly("A100");
        var half = new PodBuilder(pod).editSpec().editFirstContainer().editResources()
                .addToLimits("deviceclass.resource.kubernetes.io/a100s", new Quantity("500m")).endResources().endContainer().endSpec().build();
        assertThatThrownBy(() -> parse(half, List.of(), List.of(a100s))).isInstanceOf(InvalidPodRequestException.class)
                .hasMessageContaining("resources.limits[\"deviceclass.resource.kubernetes.io/a100s\"]: expected a whole number");
    }

    @Test
    void annotationsWinOverClaimsForModelsAndTheStricterMemoryCounts() throws Exception {
        var pod = new PodBuilder(pod("train", "gpus")).editMetadata().addToAnnotations("hetgpu.io/gpu-models", "H100")
                .addToAnnotations("hetgpu.io/min-gpu-memory", "20Gi").endMetadata().build();

        var request = parse(pod, List.of(claim("ml", "gpus", exactly("gpus", NVIDIA, 1,
                "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'",
                "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"))), List.of(nvidiaClass()));

        assertThat(request.models()).containsExactly("H100");
        assertThat(request.minMemoryMiB()).isEqualTo(80 * 1024);
    }

    @Test
    void moreThanSixtyFourGpusIsRefusedNamingTheField() {
        assertThatThrownBy(() -> parse(pod("train", "gpus"), List.of(claim("ml", "gpus", exactly("gpus", NVIDIA, 1_000_000))),
                List.of(nvidiaClass()))).isInstanceOf(InvalidPodRequestException.class)
                .hasMessageContaining("spec.resourceClaims: at most 64 GPUs per pod");
    }

    @Test
    void aMissingClaimOrClassIsANoteNotAFailure() throws Exception {
        var missingClaim = parse(pod("train", "gone"), List.of(), List.of(nvidiaClass()));
        assertThat(missingClaim.gpuCount()).isZero();
        assertThat(missingClaim.claimNote()).contains("claim \"gone\" not found");

        var missingClass = parse(pod("train", "gpus"), List.of(claim("ml", "gpus", exactly("gpus", "no-such-class", 2))), List.of());
        assertThat(missingClass.gpuCount()).isZero();
        assertThat(missingClass.claimNote()).contains("DeviceClass \"no-such-class\" not found");
    }

    @Test
    void hostileExpressionsAreBoundedAndNeverThrow() throws Exception {
        var deep = "(".repeat(5_000) + "device.driver == 'gpu.nvidia.com'" + ")".repeat(5_000);
        var unbalanced = "device.attributes['gpu.nvidia.com'].productName == 'A100' && ((";
        var long_ = "device.attributes['gpu.nvidia.com'].productName == '" + "A".repeat(20_000) + "'";
        for (var expression : List.of(deep, unbalanced, long_, "'", "\\", "&&&&||||", "device.attributes[''].x == ''")) {
            var request = parse(pod("train", "gpus"), List.of(claim("ml", "gpus", exactly("gpus", NVIDIA, 1, expression))), List.of(nvidiaClass()));
            assertThat(request.gpuCount()).as(expression.substring(0, Math.min(40, expression.length()))).isEqualTo(1);
            assertThat(request.claimNote().length()).isLessThan(2_000);
        }
    }

    private io.hetgpu.gpu.tier.CardRequirements cards(String expression) throws InvalidPodRequestException {
        var request = parse(pod("train", "gpus"), List.of(claim("ml", "gpus", exactly("gpus", NVIDIA, 1, expression))), List.of(nvidiaClass()));
        assertThat(request.claimNote()).as(expression).isEmpty();
        return request.cards();
    }

    private PodRequest parse(Pod pod, List<ResourceClaim> claims, List<DeviceClass> classes) throws InvalidPodRequestException {
        return new PodRequestParser("nvidia.com/gpu", catalog, Set.of()).withDra(TestDra.Lookup.of(claims, classes)).parse(pod);
    }

    /** A pod in namespace ml with one container; naming claim {@code claimName} when not null. */
    static Pod pod(String name, String claimName) {
        var builder = new PodBuilder().withNewMetadata().withNamespace("ml").withName(name).withUid("uid-" + name).endMetadata()
                .withNewSpec().addNewContainer().withName("main").withImage("trainer").endContainer().endSpec();
        if (claimName != null) {
            builder.editSpec().withResourceClaims(new PodResourceClaimBuilder().withName("gpus").withResourceClaimName(claimName).build())
                    .endSpec();
        }
        return builder.build();
    }
}
