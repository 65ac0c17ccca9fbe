package io.hetgpu.nvml;

import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.discovery.GpuSource;
import io.hetgpu.gpu.discovery.HealthChange;
import io.hetgpu.nvml.javacpp.JavacppNvmlDriver;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A node's GPUs as NVML reports them. The topology is read once at {@link #open} (it cannot change while
 * the node runs); health is watched from then on by one thread of the source's own.
 */
public final class NvmlGpuSource implements GpuSource {

    private static final System.Logger LOG = System.getLogger(NvmlGpuSource.class.getName());

    private final NvmlDriver driver;
    private final NodeTopology discovered;
    private final Map<String, DeviceHealth> health = new ConcurrentHashMap<>();
    private final List<Consumer<HealthChange>> listeners = new CopyOnWriteArrayList<>();
    private final NvmlHealthWatcher watcher;
    private final AtomicBoolean closed = new AtomicBoolean();

    private NvmlGpuSource(NvmlDriver driver, NodeTopology discovered, NvmlOptions options, Clock clock, Optional<String> bootId) {
        this.driver = driver;
        this.discovered = discovered;
        var indexByUuid = new LinkedHashMap<String, Integer>();
        for (var device : discovered.devices()) {
            indexByUuid.put(device.uuid(), device.index());
            health.put(device.uuid(), device.health());
        }
        this.watcher = new NvmlHealthWatcher(driver, indexByUuid, options, clock, bootId, this::apply);
        // GPUs a saved mark still holds are unhealthy in the very first topology handed out.
        apply(watcher.restore());
    }

    /**
     * Loads NVML (nothing but the driver's {@code libnvidia-ml.so.1} is needed), discovers the node's GPUs
     * and their links, and starts watching their health.
     *
     * @throws GpuDiscoveryException with one sentence when NVML cannot be loaded or reports no GPU
     */
    public static NvmlGpuSource open(NvmlOptions options) throws GpuDiscoveryException {
        return open(JavacppNvmlDriver.open(), options, Clock.systemUTC(), BootId.read(BootId.KERNEL_FILE));
    }

    /** Discovery over any driver, at a boot ID of the test's choosing. Closes the driver on failure. */
    static NvmlGpuSource open(NvmlDriver driver, NvmlOptions options, Clock clock) throws GpuDiscoveryException {
        return open(driver, options, clock, Optional.of("test-boot"));
    }

    /** Discovery over any driver: the seam the tests use with fake machines. Closes the driver on failure. */
    static NvmlGpuSource open(NvmlDriver driver, NvmlOptions options, Clock clock, Optional<String> bootId)
            throws GpuDiscoveryException {
        NodeTopology topology;
        try {
            topology = TopologyAssembler.assemble(driver);
        } catch (NvmlException | IllegalArgumentException e) {
            driver.close();
            throw new GpuDiscoveryException("NVML discovery failed: " + e.getMessage(), e);
        }
        if (topology.size() == 0) {
            driver.close();
            throw new GpuDiscoveryException("NVML is running but reports no GPU on this node (driver "
                    + topology.driverVersion() + ").");
        }
        var source = new NvmlGpuSource(driver, topology, options, clock, bootId);
        source.watcher.start();
        return source;
    }

    @Override
    public String description() {
        return "nvml (driver " + discovered.driverVersion() + ", CUDA " + discovered.cudaDriverVersion() + ")";
    }

    @Override
    public NodeTopology topology() {
        return discovered.withHealth(Map.copyOf(health));
    }

    @Override
    public AutoCloseable watchHealth(Consumer<HealthChange> listener) {
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /** Stops the health watcher (within one NVML wait, at most half a second) and shuts NVML down. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            watcher.close();
            listeners.clear();
            driver.close();
        }
    }

    private void apply(List<HealthChange> changes) {
        for (var change : changes) {
            health.put(change.uuid(), change.health());
        }
        for (var change : changes) {
            for (var listener : listeners) {
                try {
                    listener.accept(change);
                } catch (RuntimeException e) {
                    // One faulty listener must not keep the change from the others.
                    LOG.log(System.Logger.Level.WARNING, "health listener failed on " + change, e);
                }
            }
        }
    }
}
