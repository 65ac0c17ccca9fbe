package io.hetgpu.testcluster.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReportTest {

    private final List<Placement> placements = List.of(
            new Placement("ml/resnet-worker-0", "resnet", "worker", "high", "dgx-a100-1", "rack-a", "A100", List.of(0, 1), true, DataDistance.SAME_RACK),
            new Placement("ml/sweep-3", "sweep", "sweep", "low", "", "", "", List.of(), false, DataDistance.NO_DATA),
            new Placement("ml/serve-0", "serving", "serving", "normal", "cpu-1", "rack-b", "cpu", List.of(), false, DataDistance.NO_DATA));

    @Test
    void tableAlignsColumnsAndMarksPendingPods() {
        var lines = PlacementTable.render(placements).lines().toList();

        assertThat(lines).hasSize(4);
        assertThat(lines.get(0)).startsWith("POD").contains("NVLINK");
        assertThat(lines.get(1).indexOf("dgx-a100-1")).isEqualTo(lines.get(0).indexOf("NODE"));
        assertThat(lines.get(1)).contains("0,1").contains("yes").endsWith("same rack");
        assertThat(lines.get(2)).contains("(pending)");
    }

    @Test
    void pictureColoursEachHeldGpuByItsJobAndEscapesNames() {
        var nodes = List.of(new NodeView("dgx-a100-1", "rack-a", "dgx-a100", "A100", 8), new NodeView("cpu-1", "rack-b", "cpu", "cpu", 0));
        var panels = new LinkedHashMap<String, List<Placement>>();
        panels.put("hetgpu <extender>", placements);

        var html = ClusterPicture.render("demo", nodes, panels);

        assertThat(html).startsWith("<!DOCTYPE html>").doesNotContain("<script").contains("hetgpu &lt;extender&gt;");
        assertThat(html.split("title=\"A100 [01] resnet\" style=\"background:#4e79a7\"", -1)).hasSize(3);
        assertThat(html).contains("title=\"A100 7 free\"").contains("title=\"serving (no GPU)\"");
    }
}
