package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class VolumeLocalityTest {

    @Test
    void theClaimsAnnotationWinsOverTheVolume() {
        var claim = new PersistentVolumeClaimBuilder().withNewMetadata().withName("c")
                .withAnnotations(Map.of("hetgpu.io/data-locality", "rack=r7")).endMetadata().build();
        var volume = new PersistentVolumeBuilder().withNewMetadata().withName("v")
                .withAnnotations(Map.of("hetgpu.io/data-locality", "zone=z1")).endMetadata().build();
        assertThat(VolumeLocality.of(claim, volume, "topology.hetgpu.io/rack").racks()).isEqualTo(Set.of("r7"));
        assertThat(VolumeLocality.of(null, volume, "topology.hetgpu.io/rack").zones()).isEqualTo(Set.of("z1"));
    }

    @Test
    void readsZoneAndRackTermsOfTheNodeAffinity() {
        var volume = new PersistentVolumeBuilder().withNewMetadata().withName("v").endMetadata().withNewSpec()
                .withNewNodeAffinity().withNewRequired().addNewNodeSelectorTerm()
                .addNewMatchExpression().withKey("topology.kubernetes.io/zone").withOperator("In").withValues("z2").endMatchExpression()
                .addNewMatchExpression().withKey("topology.hetgpu.io/rack").withOperator("In").withValues("r3").endMatchExpression()
                .endNodeSelectorTerm().endRequired().endNodeAffinity().endSpec().build();
        var locality = VolumeLocality.of(null, volume, "topology.hetgpu.io/rack");
        assertThat(locality.zones()).isEqualTo(Set.of("z2"));
        assertThat(locality.racks()).isEqualTo(Set.of("r3"));
    }

    @Test
    void aVolumeWithoutPlacementSaysNothing() {
        assertThat(VolumeLocality.of(null, null, "rack").isEmpty()).isTrue();
    }
}
