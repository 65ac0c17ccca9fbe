package io.hetgpu.extender.cluster;

import static io.hetgpu.extender.TestDra.NVIDIA;
import static io.hetgpu.extender.TestDra.allocated;
import static io.hetgpu.extender.TestDra.claim;
import static io.hetgpu.extender.TestDra.exactly;
import static io.hetgpu.extender.TestDra.nvidiaClass;
import static io.hetgpu.extender.TestDra.nvidiaGpus;
import static io.hetgpu.extender.TestDra.slice;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.hetgpu.extender.TestTrust;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.service.ExtenderService;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A cluster read once, DRA's objects with it, answers a DRA pod as the informers' view does. */
class ListedDraTest {

    private final CardCatalog catalog = CardCatalog.defaults();

    @Test
    void aListedClusterReadsSlicesAndAllocatedClaimsAsTheInformersDo() throws Exception {
        var running = new PodBuilder().withNewMetadata().withNamespace("ml").withName("running").withUid("uid-running").endMetadata()
                .withNewSpec().withNodeName("a100").withPriority(7).addNewResourceClaim().withName("gpus").withResourceClaimName("running-gpus")
                .endResourceClaim().endSpec().build();
        var waiting = new PodBuilder().withNewMetadata().withNamespace("ml").withName("waiting").withUid("uid-waiting").endMetadata()
                .withNewSpec().addNewResourceClaim().withName("gpus").withResourceClaimName("waiting-gpus").endResourceClaim()
                .addNewContainer().withName("main").withImage("t").endContainer().endSpec().build();
        var dra = new ListedDra(List.of(slice("a100", NVIDIA, 1, 1, nvidiaGpus(8, "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi"))),
                List.of(allocated(claim("ml", "running-gpus", exactly("gpus", NVIDIA, 6)), "a100", NVIDIA, "uid-running",
                                "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5"),
                        claim("ml", "waiting-gpus", exactly("gpus", NVIDIA, 4))), List.of(nvidiaClass()), catalog);
        var parser = new PodRequestParser("nvidia.com/gpu", catalog).withDra(dra);
        var view = new ListedClusterView(List.of(new NodeBuilder().withNewMetadata().withName("a100").endMetadata().build()),
                List.of(running, waiting), List.of(), List.of(), dra, parser, "rack", TestTrust.trust());

        assertThat(view.nodes().facts("a100").slices().gpus()).hasSize(8);
        assertThat(view.boundPods("a100")).singleElement().satisfies(holding -> {
            assertThat(holding.uid()).isEqualTo("uid-running");
            assertThat(holding.priority()).isEqualTo(7);
        });
        var service = new ExtenderService(view, parser, new NodeStateFactory(catalog, "rack"), new PlacementPolicy(PolicySettings.DEFAULTS),
                (pod, table) -> { });
        assertThat(service.filter(new ExtenderArgs(waiting, null, List.of("a100"))).failedNodes())
                .containsEntry("a100", "2 free A100, pod needs 4");
    }

    @Test
    void claimsAllocatedInTheCopyAreHeldOnceTheViewIsToldOfThem() {
        var slices = List.of(slice("a100", NVIDIA, 1, 1, nvidiaGpus(8, "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi")));
        var claim = claim("ml", "trainer-gpus", exactly("gpus", NVIDIA, 2));
        var before = new ListedDra(slices, List.of(claim), List.of(nvidiaClass()), catalog);
        var trainer = new PodBuilder().withNewMetadata().withNamespace("ml").withName("trainer").withUid("uid-trainer").endMetadata()
                .withNewSpec().withNodeName("a100").withPriority(3).addNewResourceClaim().withName("gpus").withResourceClaimName("trainer-gpus")
                .endResourceClaim().endSpec().build();
        var parser = new PodRequestParser("nvidia.com/gpu", catalog).withDra(before);
        var view = new ListedClusterView(List.of(new NodeBuilder().withNewMetadata().withName("a100").endMetadata().build()),
                List.of(trainer), List.of(), List.of(), before, parser, "rack", TestTrust.trust());
        assertThat(view.boundPods("a100")).noneMatch(holding -> holding.devices().equals(List.of(NVIDIA + "/a100/gpu-3", NVIDIA + "/a100/gpu-4")));

        view.useDra(new ListedDra(slices, List.of(allocated(claim, "a100", NVIDIA, "uid-trainer", "gpu-3", "gpu-4")), List.of(nvidiaClass()),
                catalog));

        assertThat(view.boundPods("a100")).singleElement().satisfies(holding -> {
            assertThat(holding.uid()).isEqualTo("uid-trainer");
            assertThat(holding.devices()).containsExactly(NVIDIA + "/a100/gpu-3", NVIDIA + "/a100/gpu-4");
            assertThat(holding.priority()).isEqualTo(3);
        });
    }
}
