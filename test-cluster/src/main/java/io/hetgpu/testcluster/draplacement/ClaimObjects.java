package io.hetgpu.testcluster.draplacement;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraintBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelectorBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
import io.hetgpu.kubescheduler.dra.AllocationMode;
import io.hetgpu.kubescheduler.dra.Claim;
import io.hetgpu.kubescheduler.dra.DeviceRequest;
import io.hetgpu.kubescheduler.dra.ExactRequest;
import java.util.List;

/**
 * A modelled claim as the API object a pod author (or the admission policy) writes: the ResourceClaimTemplate whose
 * claims {@code DraObjects.claim} reads back into the same {@link Claim}. Counts only ({@code allocationMode: ExactCount}).
 */
public final class ClaimObjects {

    private ClaimObjects() {
    }

    public static ResourceClaimTemplate template(String namespace, String name, Claim claim) {
        var requests = claim.requests().stream().map(request -> switch (request) {
            case DeviceRequest.Exactly exactly -> new DeviceRequestBuilder().withName(exactly.name()).withExactly(
                    new ExactDeviceRequestBuilder().withDeviceClassName(exactly.request().deviceClassName()).withCount(count(exactly.request()))
                            .withSelectors(selectors(exactly.request())).build()).build();
            case DeviceRequest.FirstAvailable first -> new DeviceRequestBuilder().withName(first.name()).withFirstAvailable(
                    first.subRequests().stream().map(sub -> new DeviceSubRequestBuilder().withName(sub.name())
                            .withDeviceClassName(sub.request().deviceClassName()).withCount(count(sub.request()))
                            .withSelectors(selectors(sub.request())).build()).toList()).build();
        }).toList();
        var constraints = claim.constraints().stream()
                .map(c -> new DeviceConstraintBuilder().withRequests(c.requests()).withMatchAttribute(c.attribute()).build()).toList();
        return new ResourceClaimTemplateBuilder().withNewMetadata().withName(name).withNamespace(namespace).endMetadata()
                .withNewSpec().withNewSpec().withNewDevices().withRequests(requests).withConstraints(constraints).endDevices()
                .endSpec().endSpec().build();
    }

    private static long count(ExactRequest request) {
        if (request.mode() != AllocationMode.EXACT_COUNT) {
            throw new IllegalArgumentException("only ExactCount requests are written here");
        }
        return request.count();
    }

    private static List<DeviceSelector> selectors(ExactRequest request) {
        return request.selectors().stream()
                .map(cel -> new DeviceSelectorBuilder().withNewCel().withExpression(cel).endCel().build()).toList();
    }
}
