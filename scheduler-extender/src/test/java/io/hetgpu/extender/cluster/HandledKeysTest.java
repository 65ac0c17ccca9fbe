package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.ArrayList;
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

    @Test
    void theHandlerPassesBeforeAndAfterOnAndMarksEvenAChangeThatFailed() {
        var keys = new HandledKeys();
        var seen = new ArrayList<String>();
        var gpu1 = new NodeBuilder().withNewMetadata().withName("gpu-1").endMetadata().build();
        var gpu2 = new NodeBuilder().withNewMetadata().withName("gpu-2").endMetadata().build();
        var handler = keys.<Node>handling((before, after) -> {
            seen.add((before == null ? "-" : before.getMetadata().getName()) + ">" + (after == null ? "-" : after.getMetadata().getName()));
            if (after == gpu2) {
                throw new IllegalStateException("index node doesn't exist!");
            }
        });

        handler.onAdd(gpu1);
        assertThatThrownBy(() -> handler.onAdd(gpu2)).hasMessageContaining("index node");
        handler.onDelete(gpu1, false);

        assertThat(seen).containsExactly("-" + ">gpu-1", "-" + ">gpu-2", "gpu-1>-");
        // fabric8 logs the failure; the first list is still caught up, so one object cannot keep the extender unready.
        assertThat(keys.caughtUpWith(List.of("gpu-1", "gpu-2"))).isTrue();
    }
}
