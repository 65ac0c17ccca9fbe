package io.hetgpu.testcluster.cluster;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.hetgpu.gpu.inventory.HetgpuDra;

/**
 * The plain DeviceClass the test cluster makes for nodes hetgpu's DRA driver publishes ({@code NodeSpec.dra(…,
 * DraDriver.HETGPU)}): every device of the driver, named after it. A test that wants the shipped classes (by tier,
 * with NVLink) creates those itself.
 */
public final class HetgpuDraClass {

    /** The class's name, the driver's. */
    public static final String GPU_CLASS = HetgpuDra.DRIVER;

    private HetgpuDraClass() {
    }

    public static DeviceClass gpuClass() {
        return new DeviceClassBuilder().withNewMetadata().withName(GPU_CLASS).endMetadata().withNewSpec()
                .addNewSelector().withNewCel().withExpression("device.driver == '" + HetgpuDra.DRIVER + "'").endCel().endSelector()
                .endSpec().build();
    }
}
