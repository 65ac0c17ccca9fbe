package io.hetgpu.deviceplugin;

import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.discovery.GpuSource;
import io.hetgpu.gpu.discovery.HealthChange;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/** A GpuSource whose health changes the test makes. */
public final class FakeGpuSource implements GpuSource {

    private final NodeTopology topology;
    private final List<Consumer<HealthChange>> listeners = new CopyOnWriteArrayList<>();

    public FakeGpuSource(NodeTopology topology) {
        this.topology = topology;
    }

    @Override
    public String description() {
        return "fake";
    }

    @Override
    public NodeTopology topology() {
        return topology;
    }

    @Override
    public AutoCloseable watchHealth(Consumer<HealthChange> listener) {
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    public void report(String uuid, DeviceHealth health) {
        listeners.forEach(listener -> listener.accept(new HealthChange(uuid, health, "test")));
    }

    @Override
    public void close() {
        listeners.clear();
    }
}
