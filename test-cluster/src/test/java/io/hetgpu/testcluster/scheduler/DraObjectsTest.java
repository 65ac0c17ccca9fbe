package io.hetgpu.testcluster.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.hetgpu.kubescheduler.dra.AllocationMode;
import io.hetgpu.kubescheduler.dra.DeviceRequest;
import io.hetgpu.kubescheduler.dra.ExactRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

class DraObjectsTest {

    private static ResourceClaim claim(io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest... requests) {
        return new ResourceClaimBuilder().withNewMetadata().withName("c").withNamespace("team-a").endMetadata()
                .withNewSpec().withNewDevices().withRequests(requests).endDevices().endSpec().build();
    }

    private static String unreadable(ResourceClaim claim) {
        assertThat(DraObjects.claim(claim)).isInstanceOf(DraObjects.ClaimReading.Unreadable.class);
        return ((DraObjects.ClaimReading.Unreadable) DraObjects.claim(claim)).reason();
    }

    @Test
    void exactlyAndFirstAvailableAreReadWithTheApiServersDefaults() {
        var read = DraObjects.claim(claim(
                new DeviceRequestBuilder().withName("one").withNewExactly().withDeviceClassName("gpu.nvidia.com").endExactly().build(),
                new DeviceRequestBuilder().withName("all").withNewExactly().withDeviceClassName("gpu.nvidia.com").withAllocationMode("All")
                        .addNewSelector().withNewCel().withExpression("true").endCel().endSelector().endExactly().build(),
                new DeviceRequestBuilder().withName("pick").withFirstAvailable(new DeviceSubRequestBuilder().withName("a")
                        .withDeviceClassName("gpu.nvidia.com").withCount(2L).build()).build()));
        assertThat(read).isInstanceOfSatisfying(DraObjects.ClaimReading.Read.class, r -> assertThat(r.claim().requests()).containsExactly(
                new DeviceRequest.Exactly("one", new ExactRequest("gpu.nvidia.com", List.of(), AllocationMode.EXACT_COUNT, 1)),
                new DeviceRequest.Exactly("all", new ExactRequest("gpu.nvidia.com", List.of("true"), AllocationMode.ALL, 0)),
                new DeviceRequest.FirstAvailable("pick", List.of(new DeviceRequest.SubRequest("a",
                        new ExactRequest("gpu.nvidia.com", List.of(), AllocationMode.EXACT_COUNT, 2))))));
    }

    @Test
    void whatTheModelCannotReadIsAReasonNamingTheFieldAndValue() {
        assertThat(unreadable(claim(new DeviceRequestBuilder().withName("odd").withNewExactly().withDeviceClassName("x")
                .withAllocationMode("Some").endExactly().build())))
                .isEqualTo("claim team-a/c, request \"odd\": unsupported allocationMode \"Some\"");
        assertThat(unreadable(claim(new DeviceRequestBuilder().withName("empty").build())))
                .isEqualTo("claim team-a/c, request \"empty\": neither exactly nor firstAvailable is set");
        var distinct = new ResourceClaimBuilder(claim()).editSpec().editDevices().addNewConstraint().withDistinctAttribute("gpu.nvidia.com/uuid")
                .endConstraint().endDevices().endSpec().build();
        assertThat(unreadable(distinct)).contains("distinctAttribute is not modelled");
    }

    @Test
    void aSelectorWithoutCelIsKeptAsAnEmptyExpressionForTheAllocatorToRefuse() {
        var read = DraObjects.claim(claim(new DeviceRequestBuilder().withName("r").withNewExactly().withDeviceClassName("x")
                .addNewSelector().endSelector().endExactly().build()));
        assertThat(read).isInstanceOfSatisfying(DraObjects.ClaimReading.Read.class,
                r -> assertThat(((DeviceRequest.Exactly) r.claim().requests().get(0)).request().selectors()).containsExactly(""));
    }
}
