package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The informer's store keeps a count, not the object: its pod templates are dropped on arrival. */
class SizeTableTest {

    @Test
    void keepsTheCountAndGivesTheInformerBackOnlyWhatItCompares() {
        var table = new SizeTable(JobObjectKind.JOB.count());
        var job = new GenericKubernetesResource();
        job.setMetadata(new ObjectMetaBuilder().withNamespace("ml").withName("render").withResourceVersion("7")
                .withLabels(Map.of("team", "vision")).build());
        job.setAdditionalProperty("spec", Map.of("completions", 4, "parallelism", 4,
                "template", Map.of("spec", Map.of("containers", List.of(Map.of("name", "main", "image", "render:1", "args", List.of("x".repeat(4096))))))));

        assertThat(table.put(table.getKey(job), job)).isNull();

        assertThat(table.count("ml", "render")).isEqualTo(new ObjectCount.Members(4));
        assertThat(table.count("ml", "other")).isNull();
        var kept = table.get("ml/render");
        assertThat(kept.getMetadata().getName()).isEqualTo("render");
        assertThat(kept.getMetadata().getNamespace()).isEqualTo("ml");
        assertThat(kept.getMetadata().getResourceVersion()).isEqualTo("7");
        assertThat(kept.getMetadata().getLabels()).isNullOrEmpty();
        assertThat(kept.getAdditionalProperties()).doesNotContainKey("spec");
        assertThat(table.remove("ml/render").getMetadata().getResourceVersion()).isEqualTo("7");
        assertThat(table.size()).isZero();
    }

    @Test
    void anObjectOfAShapeNoReaderForesawHasAnUnreadableCount() {
        var table = new SizeTable(object -> {
            throw new ClassCastException("java.util.ArrayList cannot be cast to java.util.Map");
        });
        var odd = new GenericKubernetesResource();
        odd.setMetadata(new ObjectMetaBuilder().withNamespace("ml").withName("odd").withResourceVersion("1").build());
        table.put("ml/odd", odd);
        assertThat(table.count("ml", "odd")).isEqualTo(new ObjectCount.Unreadable(
                "could not be read: java.util.ArrayList cannot be cast to java.util.Map"));
    }
}
