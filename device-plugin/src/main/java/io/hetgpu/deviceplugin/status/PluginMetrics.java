package io.hetgpu.deviceplugin.status;

import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.util.function.Supplier;

/** The plugin's Prometheus metrics, named {@code hetgpu_device_plugin_*}. */
public final class PluginMetrics {

    private final Counter registrations;
    private final Counter allocatedDevices;
    private final Counter refusals;
    private final Counter nodePatches;
    private final Timer preferredAllocation;
    private final Counter assignmentsFollowed;
    private final Counter assignmentMismatches;
    private final Counter unassignedAllocations;

    public PluginMetrics(MeterRegistry registry, GpuInventory inventory) {
        registrations = Counter.builder("hetgpu.device.plugin.registrations")
                .description("Successful registrations with kubelet (one more after every kubelet restart)").register(registry);
        allocatedDevices = Counter.builder("hetgpu.device.plugin.allocated.devices")
                .description("Devices handed to containers through Allocate").register(registry);
        refusals = Counter.builder("hetgpu.device.plugin.allocation.refusals")
                .description("Allocate calls refused for unknown or unhealthy device IDs").register(registry);
        nodePatches = Counter.builder("hetgpu.device.plugin.node.patches")
                .description("Patches of the Node's hetgpu labels and annotations").register(registry);
        preferredAllocation = Timer.builder("hetgpu.device.plugin.preferred.allocation")
                .description("Time to choose a preferred device set").register(registry);
        // One counter, three outcomes: hetgpu_device_plugin_assignments_total{outcome=…}; alert on mismatch's increase.
        var assignments = "hetgpu.device.plugin.assignments";
        var assignmentsHelp = "Containers allocated: with the devices the extender assigned (followed), with others"
                + " kubelet chose (mismatch), or for no pending assignment (unassigned)";
        assignmentsFollowed = Counter.builder(assignments).tag("outcome", "followed").description(assignmentsHelp).register(registry);
        assignmentMismatches = Counter.builder(assignments).tag("outcome", "mismatch").description(assignmentsHelp).register(registry);
        unassignedAllocations = Counter.builder(assignments).tag("outcome", "unassigned").description(assignmentsHelp).register(registry);
        Gauge.builder("hetgpu.device.plugin.devices", inventory, i -> i.topology().size())
                .description("GPUs on this node").register(registry);
        Gauge.builder("hetgpu.device.plugin.unhealthy.devices", inventory,
                        i -> i.topology().devices().stream().filter(d -> !d.isHealthy()).count())
                .description("GPUs currently unhealthy").register(registry);
    }

    /** Metrics nobody scrapes, for tests and for runs without an HTTP port. */
    public static PluginMetrics unscraped(GpuInventory inventory) {
        return new PluginMetrics(new SimpleMeterRegistry(), inventory);
    }

    public void registered() {
        registrations.increment();
    }

    public void allocated(int devices) {
        allocatedDevices.increment(devices);
    }

    public void allocationRefused() {
        refusals.increment();
    }

    public void nodePatched() {
        nodePatches.increment();
    }

    public void assignmentFollowed() {
        assignmentsFollowed.increment();
    }

    public void assignmentMismatch() {
        assignmentMismatches.increment();
    }

    public void unassignedAllocation() {
        unassignedAllocations.increment();
    }

    public double assignmentMismatches() {
        return assignmentMismatches.count();
    }

    public <T> T timePreferredAllocation(Supplier<T> choice) {
        return preferredAllocation.record(choice);
    }
}
