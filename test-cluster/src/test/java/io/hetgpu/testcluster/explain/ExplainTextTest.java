package io.hetgpu.testcluster.explain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** How the text form words a pod that would wait: kube-scheduler's message, reasons grouped with their nodes, what would change. */
class ExplainTextTest {

    @Test
    void aWaitingPodIsToldItsReasonsGroupedAndWhatWouldHaveToChange() {
        var refusals = List.of(new PodExplanation.Refusal("node has 8 V100 (16 GiB, cc 7.0), pod needs A100 or newer (tier 70 and up)",
                List.of("dgx1-v100-1", "dgx1-v100-2"), true), new PodExplanation.Refusal("Insufficient nvidia.com/gpu",
                List.of("cpu-a1", "cpu-b1", "cpu-c1", "k80-1", "k80-2"), false));
        var pending = new PodExplanation("ml", "finetune", "Pod finetune", null, new PodExplanation.Pending("0/7 nodes are available: …"),
                List.of(), refusals, List.of("it needs 8 A100 or newer GPUs free on one node", "preemption evicts nothing for it: no victims"));
        var nominated = new PodExplanation("ml", "urgent", "Pod urgent", null, new PodExplanation.Nominated("k80-2", List.of("ml/sweep-8", "ml/sweep-9")),
                List.of(), List.of(), List.of());

        var text = ExplainText.render(new ExplainReport("the demo cluster, empty", "manifests/base of this checkout", "hetgpu-scheduler", 5, 7,
                List.of("left out, as they make no pods and placement does not read them: Service s"), List.of(pending, nominated)));

        assertThat(text).contains("""
                note: left out, as they make no pods and placement does not read them: Service s

                ml/finetune (Pod finetune)
                  no node takes it now: it would stay Pending
                  kube-scheduler: 0/7 nodes are available: …
                  refused on 7 nodes, by reason:
                    2 nodes (dgx1-v100-1, dgx1-v100-2): node has 8 V100 (16 GiB, cc 7.0), pod needs A100 or newer (tier 70 and up)
                    5 nodes (cpu-a1, cpu-b1, cpu-c1, k80-1, …): Insufficient nvidia.com/gpu
                  what would have to change:
                    - it needs 8 A100 or newer GPUs free on one node
                    - preemption evicts nothing for it: no victims
                """).contains("""
                ml/urgent (Pod urgent)
                  no node takes it now; preemption would evict ml/sweep-8, ml/sweep-9 on k80-2 and nominate it there
                """);
    }
}
