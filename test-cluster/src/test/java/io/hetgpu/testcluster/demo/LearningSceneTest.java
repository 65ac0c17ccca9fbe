package io.hetgpu.testcluster.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The demo's learning scene, with the real extender as deployed, device plugins and simulated kubelets that end pods by
 * the scene's speed table: the class goes to V100 first, to P100 once its runs are learned, and there again after the
 * extender restarts; what the demo prints quotes the learned figures as {@code ./hetgpu throughputs} prints them.
 */
class LearningSceneTest {

    @Test
    void theClassMovesToTheCardItRunsFasterOnOnceLearnedAndTheDemoSaysWhyWithTheFigures() throws Exception {
        var scene = LearningScene.run(DeployedConfiguration.load(ProjectFiles.manifests()), 42, message -> { });

        assertThat(scene.before().node()).isEqualTo(LearningScene.V100_NODE);
        assertThat(scene.runs()).hasSize(2 * LearningScene.RUNS);
        assertThat(scene.runs()).filteredOn(run -> run.node().equals(LearningScene.V100_NODE)).hasSize(LearningScene.RUNS)
                .allSatisfy(run -> assertThat(run.end().run()).isEqualTo(Duration.ofMinutes(40)));
        assertThat(scene.runs()).filteredOn(run -> run.node().equals(LearningScene.P100_NODE)).hasSize(LearningScene.RUNS)
                .allSatisfy(run -> assertThat(run.end().run()).isEqualTo(Duration.ofMinutes(30)));
        assertThat(scene.after().node()).isEqualTo(LearningScene.P100_NODE);
        assertThat(scene.after().explanation()).startsWith("best: " + LearningScene.P100_NODE)
                .contains("lstm runs 1.3x faster per GPU on P100 than on V100 (learned, 3 and 3 runs)");
        assertThat(scene.restarted().node()).isEqualTo(LearningScene.P100_NODE);
        // The class's block of `./hetgpu throughputs`, read from the ConfigMap: P100 first, each figure on its 3 runs.
        assertThat(scene.throughputs().lines().toList()).first().asString().startsWith("lstm (6 runs; fastest: P100)");
        assertThat(scene.throughputs()).containsPattern("P100 +24\\.0 +3 +2-4 +1\\.00").containsPattern("V100 +18\\.0 +3 +2-4 +0\\.75");

        var printed = LearningScene.describe(scene);
        assertThat(printed).contains("lstm-0 (high priority) goes to dgx1-v100-1", "lstm-after (high priority) goes to dgx1-p100-1",
                "40m00s", "30m00s", "\"hetgpu.io/work: 86400\"", "lstm-after-restart goes to dgx1-p100-1", scene.after().explanation(),
                "lstm (6 runs; fastest: P100)");
        System.out.print(LearningScene.setting());
        System.out.print(printed);
    }

    @Test
    void theClassBlockIsCutFromTheCommandsText() {
        var text = """
                Learned workload speeds, ConfigMap default/hetgpu-throughputs on "http://127.0.0.1:1": 1 class
                per GPU: ...

                lstm (6 runs; fastest: P100)
                  card          per GPU    runs  of best
                  P100             24.0       3     1.00

                note: something
                """;
        assertThat(LearningScene.classBlock(text)).isEqualTo("""
                lstm (6 runs; fastest: P100)
                  card          per GPU    runs  of best
                  P100             24.0       3     1.00
                """);
        assertThat(LearningScene.classBlock("nothing learned yet\n")).isEqualTo("nothing learned yet\n");
    }
}
