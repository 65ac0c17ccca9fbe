package io.hetgpu.nvml;

import io.hetgpu.gpu.ComputeCapability;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/** An {@link NvmlDriver} that answers like a known machine; events are fed in by the test. */
class FakeNvmlDriver implements NvmlDriver {

    final List<DeviceInfo> devices;
    final Map<Integer, List<NvlinkPort>> links;
    final BiFunction<Integer, Integer, NvmlTopologyLevel> ancestor;
    final LinkedBlockingQueue<HealthEvent> events = new LinkedBlockingQueue<>();
    final Set<Integer> silentDevices = ConcurrentHashMap.newKeySet();
    /** What {@link #resetSignals} answers, by device index; unknown for the others. */
    final Map<Integer, ResetSignals> resetSignals = new ConcurrentHashMap<>();
    final java.util.concurrent.atomic.AtomicInteger probes = new java.util.concurrent.atomic.AtomicInteger();
    volatile boolean closed;
    volatile boolean eventsClosed;
    volatile RuntimeException waitFailure;

    FakeNvmlDriver(List<DeviceInfo> devices, Map<Integer, List<NvlinkPort>> links,
                   BiFunction<Integer, Integer, NvmlTopologyLevel> ancestor) {
        this.devices = devices;
        this.links = links;
        this.ancestor = ancestor;
    }

    static String busId(int bus) {
        return String.format("00000000:%02X:00.0", bus);
    }

    static DeviceInfo device(int index, String name, String cc, long memoryMiB, int bus) {
        return new DeviceInfo(index, String.format("GPU-%08x-1111-2222-3333-%012d", bus, index), name,
                ComputeCapability.parse(cc), memoryMiB * 1024 * 1024, busId(bus), index < 4 ? 0 : 1);
    }

    /** DGX-1 V100: direct NVLink 2 links in the hybrid cube-mesh, NVML naming the peer GPU at each link's far end. */
    static FakeNvmlDriver dgx1V100(RemoteEnd remoteEnd) {
        int[] buses = {0x06, 0x07, 0x0A, 0x0B, 0x85, 0x86, 0x89, 0x8A};
        int[][] pairs = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 3, 1}, {1, 5, 2}, {2, 3, 2}, {2, 6, 1},
                {3, 7, 1}, {4, 5, 1}, {4, 6, 1}, {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2}};
        var devices = new ArrayList<DeviceInfo>();
        var links = new HashMap<Integer, List<NvlinkPort>>();
        for (int i = 0; i < 8; i++) {
            devices.add(device(i, "Tesla V100-SXM2-16GB", "7.0", 16160, buses[i]));
            links.put(i, new ArrayList<>());
        }
        for (var pair : pairs) {
            for (int k = 0; k < pair[2]; k++) {
                addPort(links.get(pair[0]), busId(buses[pair[1]]), remoteEnd);
                addPort(links.get(pair[1]), busId(buses[pair[0]]), remoteEnd);
            }
        }
        return new FakeNvmlDriver(devices, links, (a, b) -> a / 4 == b / 4 ? NvmlTopologyLevel.NODE : NvmlTopologyLevel.SYSTEM);
    }

    /** DGX A100: 8 A100s, 12 links each, two into each of 6 NVSwitches; NVML names the switch, never the peer. */
    static FakeNvmlDriver dgxA100(RemoteEnd remoteEnd, Map<Integer, Integer> linksDown) {
        int[] buses = {0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD};
        var devices = new ArrayList<DeviceInfo>();
        var links = new HashMap<Integer, List<NvlinkPort>>();
        for (int i = 0; i < 8; i++) {
            devices.add(device(i, "NVIDIA A100-SXM4-80GB", "8.0", 81920, buses[i]));
            var ports = new ArrayList<NvlinkPort>();
            for (int link = 0; link < 12 - linksDown.getOrDefault(i, 0); link++) {
                ports.add(new NvlinkPort(link, busId(0xC4 + link / 2), remoteEnd));
            }
            links.put(i, ports);
        }
        return new FakeNvmlDriver(devices, links, (a, b) -> a / 2 == b / 2 ? NvmlTopologyLevel.MULTIPLE
                : a / 4 == b / 4 ? NvmlTopologyLevel.NODE : NvmlTopologyLevel.SYSTEM);
    }

    /** Four K80 boards (two GPUs each, behind the board's own PCIe switch), two boards per CPU socket. */
    static FakeNvmlDriver k80Box() {
        var devices = new ArrayList<DeviceInfo>();
        var links = new HashMap<Integer, List<NvlinkPort>>();
        for (int i = 0; i < 8; i++) {
            devices.add(device(i, "Tesla K80", "3.7", 11441, 0x04 + i));
            links.put(i, List.of());
        }
        return new FakeNvmlDriver(devices, links, (a, b) -> a / 2 == b / 2 ? NvmlTopologyLevel.INTERNAL
                : a / 4 == b / 4 ? NvmlTopologyLevel.HOSTBRIDGE : NvmlTopologyLevel.SYSTEM);
    }

    private static void addPort(List<NvlinkPort> ports, String remoteBusId, RemoteEnd remoteEnd) {
        ports.add(new NvlinkPort(ports.size(), remoteBusId, remoteEnd));
    }

    @Override
    public String driverVersion() {
        return "470.256.02";
    }

    @Override
    public String cudaDriverVersion() {
        return "11.4";
    }

    @Override
    public List<DeviceInfo> devices() {
        return devices;
    }

    @Override
    public List<NvlinkPort> nvlinks(int index) {
        return links.getOrDefault(index, List.of());
    }

    @Override
    public NvmlTopologyLevel commonAncestor(int first, int second) {
        return ancestor.apply(first, second);
    }

    @Override
    public HealthEvents healthEvents() {
        eventsClosed = false;
        return new HealthEvents() {
            @Override
            public Optional<HealthEvent> await(Duration timeout) {
                var failure = waitFailure;
                if (failure != null) {
                    waitFailure = null;
                    throw failure;
                }
                try {
                    return Optional.ofNullable(events.poll(timeout.toMillis(), TimeUnit.MILLISECONDS));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return Optional.empty();
                }
            }

            @Override
            public void close() {
                eventsClosed = true;
            }
        };
    }

    @Override
    public boolean answersNormally(int index) {
        boolean answers = !silentDevices.contains(index);
        probes.incrementAndGet();
        return answers;
    }

    @Override
    public ResetSignals resetSignals(int index) {
        return resetSignals.getOrDefault(index, ResetSignals.UNKNOWN);
    }

    @Override
    public void close() {
        closed = true;
    }
}
