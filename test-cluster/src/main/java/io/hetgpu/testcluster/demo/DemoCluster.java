package io.hetgpu.testcluster.demo;

import io.hetgpu.testcluster.cluster.NodeSpec;
import java.util.List;

/** The demo's heterogeneous cluster: three racks over two zones, five GPU generations and CPU-only nodes. */
public final class DemoCluster {

    /** The rack whose storage holds the training data. */
    public static final String DATA_RACK = "rack-a";

    private DemoCluster() {
    }

    public static List<NodeSpec> nodes() {
        return List.of(
                NodeSpec.gpu("dgx-h100-1", "rack-a", "zone-1", "dgx-h100"),
                NodeSpec.gpu("dgx-a100-1", "rack-a", "zone-1", "dgx-a100"),
                NodeSpec.cpu("cpu-a1", "rack-a", "zone-1"),
                NodeSpec.gpu("dgx1-v100-1", "rack-b", "zone-1", "dgx1-v100"),
                NodeSpec.gpu("dgx1-v100-2", "rack-b", "zone-1", "dgx1-v100"),
                NodeSpec.gpu("t4-1", "rack-b", "zone-1", "t4-4x"),
                NodeSpec.cpu("cpu-b1", "rack-b", "zone-1"),
                NodeSpec.gpu("k80-1", "rack-c", "zone-2", "k80-4x"),
                NodeSpec.gpu("k80-2", "rack-c", "zone-2", "k80-4x"),
                NodeSpec.gpu("t4-2", "rack-c", "zone-2", "t4-4x"),
                NodeSpec.cpu("cpu-c1", "rack-c", "zone-2"));
    }
}
