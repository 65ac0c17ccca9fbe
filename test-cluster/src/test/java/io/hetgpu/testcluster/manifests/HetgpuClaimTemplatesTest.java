package io.hetgpu.testcluster.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.hetgpu.kubescheduler.dra.Claim;
import io.hetgpu.kubescheduler.dra.HetgpuClaims;
import io.hetgpu.testcluster.scheduler.DraObjects;
import java.util.ArrayList;
import org.junit.jupiter.api.Test;

/**
 * The shipped claim templates are the claims the DRA placement measurement places ({@code HetgpuClaims}): every count
 * and level, read as kube-scheduler's allocator model reads a claim made from them, is the modelled claim, so the
 * figures of docs/benchmarks.md are those of what ships.
 */
class HetgpuClaimTemplatesTest {

    private static Claim read(ResourceClaimTemplate template) {
        var claim = new ResourceClaimBuilder().withNewMetadata().withNamespace("ml").withName("c").endMetadata()
                .withSpec(template.getSpec().getSpec()).build();
        return ((DraObjects.ClaimReading.Read) DraObjects.claim(claim)).claim();
    }

    @Test
    void everyShippedTemplateIsTheModelledClaimOfItsCountAndLevel() {
        var shipped = DraInstallTest.shippedTemplates();
        var expected = new ArrayList<String>();
        for (int count : HetgpuClaims.COUNTS) {
            for (var priority : HetgpuClaims.Priority.values()) {
                var name = HetgpuClaims.templateName(count, priority);
                expected.add(name);
                var template = shipped.stream().filter(t -> t.getMetadata().getName().equals(name)).findFirst();
                assertThat(template).as(name).isPresent();
                assertThat(read(template.get())).as(name).isEqualTo(HetgpuClaims.claim("ml", "c", priority, count));
            }
        }
        assertThat(shipped).extracting(t -> t.getMetadata().getName()).containsExactlyInAnyOrderElementsOf(expected);
    }
}
