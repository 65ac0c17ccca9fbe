package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

class HandledKeysTest {

    @Test
    void notCaughtUpWhileAnObjectOfTheStoreHasNotReachedTheHandler() {
        var keys = new HandledKeys();
        keys.handled(new NodeBuilder().withNewMetadata().withName("gpu-1").endMetadata().build());

        assertThat(keys.caughtUpWith(List.of("gpu-1", "gpu-2"))).isFalse();

        keys.handled(new NodeBuilder().withNewMetadata().withName("gpu-2").endMetadata().build());
        assertThat(keys.caughtUpWith(List.of("gpu-1", "gpu-2"))).isTrue();
    }

    @Test
    void podsAreKeyedAsTheStoreKeysThemAndOnceCaughtUpItStaysSo() {
        var keys = new HandledKeys();
        keys.handled(new PodBuilder().withNewMetadata().withNamespace("team-a").withName("train-0").endMetadata().build());

        assertThat(keys.caughtUpWith(List.of("team-a/train-0"))).isTrue();
        // Objects added after the first list are followed by the view as they come; readiness does not wait for them.
        assertThat(keys.caughtUpWith(List.of("team-a/train-0", "team-a/train-1"))).isTrue();
    }

    @Test
    void anEmptyClusterIsCaughtUpAtOnce() {
        assertThat(new HandledKeys().caughtUpWith(List.of())).isTrue();
    }
}
