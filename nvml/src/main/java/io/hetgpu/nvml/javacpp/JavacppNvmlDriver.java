package io.hetgpu.nvml.javacpp;

import static org.bytedeco.cuda.global.nvml.*;

import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.nvml.NvmlDriver;
import io.hetgpu.nvml.NvmlException;
import io.hetgpu.nvml.NvmlTopologyLevel;
import io.hetgpu.nvml.TopologyAssembler;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.bytedeco.cuda.nvml.nvmlDevice_st;
import org.bytedeco.cuda.nvml.nvmlEventData_t;
import org.bytedeco.cuda.nvml.nvmlEventSet_st;
import org.bytedeco.cuda.nvml.nvmlMemory_t;
import org.bytedeco.cuda.nvml.nvmlPciInfo_t;
import org.bytedeco.javacpp.Loader;

/**
 * {@link NvmlDriver} over JavaCPP's NVML bindings. Every function newer than the oldest supported driver is
 * probed ({@link NvmlSymbol}) before it is called; the rest of hetgpu never sees JavaCPP types.
 */
public final class JavacppNvmlDriver implements NvmlDriver {

    private static final System.Logger LOG = System.getLogger(JavacppNvmlDriver.class.getName());
    private static final List<NvmlSymbol> EVENT_WATCHING = List.of(NvmlSymbol.EVENT_SET_CREATE,
            NvmlSymbol.SUPPORTED_EVENT_TYPES, NvmlSymbol.REGISTER_EVENTS, NvmlSymbol.EVENT_SET_WAIT, NvmlSymbol.EVENT_SET_FREE);

    private final NvmlSymbol.Probe symbols;
    private final List<nvmlDevice_st> handles;
    private final List<DeviceInfo> devices;

    private JavacppNvmlDriver(NvmlSymbol.Probe symbols) {
        this.symbols = symbols;
        int[] count = new int[1];
        check(nvmlDeviceGetCount_v2(count), "nvmlDeviceGetCount_v2");
        var handles = new ArrayList<nvmlDevice_st>();
        var devices = new ArrayList<DeviceInfo>();
        for (int index = 0; index < count[0]; index++) {
            var handle = handle(index);
            handles.add(handle);
            devices.add(describe(index, handle));
        }
        this.handles = List.copyOf(handles);
        this.devices = List.copyOf(devices);
    }

    /**
     * Loads libnvidia-ml, checks it exports every required function, initialises NVML and enumerates the
     * devices.
     */
    public static JavacppNvmlDriver open() throws GpuDiscoveryException {
        NvmlLibrary.load();
        var symbols = NvmlSymbol.Probe.of(JavacppNvmlDriver::exported);
        if (!symbols.missingRequired().isEmpty()) {
            throw new GpuDiscoveryException("NVML is not usable on this node: the driver's " + NvmlLibrary.NVML_SONAME
                    + " lacks " + String.join(", ", symbols.missingRequired()) + " (hetgpu needs driver branch 450 or newer).");
        }
        int rc = nvmlInit_v2();
        if (rc != NVML_SUCCESS) {
            throw new GpuDiscoveryException("NVML is not available on this node: nvmlInit_v2 failed: " + errorString(rc)
                    + " (NVML error " + rc + ").");
        }
        try {
            return new JavacppNvmlDriver(symbols);
        } catch (NvmlException e) {
            nvmlShutdown();
            throw new GpuDiscoveryException("NVML discovery failed: " + e.getMessage() + ".", e);
        }
    }

    /** dlsym over the loaded libraries: libnvidia-ml came in as libjninvml's dependency. */
    private static boolean exported(String symbol) {
        var address = Loader.addressof(symbol);
        return address != null && !address.isNull();
    }

    @Override
    public String driverVersion() {
        byte[] version = new byte[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
        check(nvmlSystemGetDriverVersion(version, version.length), "nvmlSystemGetDriverVersion");
        return cString(version);
    }

    @Override
    public String cudaDriverVersion() {
        int[] version = new int[1];
        check(nvmlSystemGetCudaDriverVersion_v2(version), "nvmlSystemGetCudaDriverVersion_v2");
        return version[0] / 1000 + "." + version[0] % 1000 / 10;
    }

    @Override
    public List<DeviceInfo> devices() {
        return devices;
    }

    @Override
    public List<NvlinkPort> nvlinks(int index) {
        if (!symbols.has(NvmlSymbol.NVLINK_STATE) || !symbols.has(NvmlSymbol.NVLINK_REMOTE_PCI)) {
            return List.of();
        }
        var handle = handles.get(index);
        var ports = new ArrayList<NvlinkPort>();
        int[] state = new int[1];
        for (int link = 0; link < NVML_NVLINK_MAX_LINKS; link++) {
            int rc = nvmlDeviceGetNvLinkState(handle, link, state);
            if (rc == NVML_ERROR_INVALID_ARGUMENT || rc == NVML_ERROR_NOT_SUPPORTED && link == 0) {
                break; // past this device's last link, or a card without NVLink
            }
            if (rc != NVML_SUCCESS || state[0] != NVML_FEATURE_ENABLED) {
                continue;
            }
            try (var remote = new nvmlPciInfo_t()) {
                rc = nvmlDeviceGetNvLinkRemotePciInfo_v2(handle, link, remote);
                if (rc != NVML_SUCCESS) {
                    LOG.log(System.Logger.Level.WARNING, "GPU {0} NVLink {1}: remote end unknown ({2})", index, link, errorString(rc));
                    continue;
                }
                ports.add(new NvlinkPort(link, remote.busId().getString(StandardCharsets.US_ASCII), remoteEnd(handle, link)));
            }
        }
        return ports;
    }

    private RemoteEnd remoteEnd(nvmlDevice_st handle, int link) {
        if (!symbols.has(NvmlSymbol.NVLINK_REMOTE_DEVICE_TYPE)) {
            return RemoteEnd.UNKNOWN;
        }
        int[] type = new int[1];
        if (nvmlDeviceGetNvLinkRemoteDeviceType(handle, link, type) != NVML_SUCCESS) {
            return RemoteEnd.UNKNOWN;
        }
        if (type[0] == NVML_NVLINK_DEVICE_TYPE_GPU) {
            return RemoteEnd.GPU;
        } else if (type[0] == NVML_NVLINK_DEVICE_TYPE_SWITCH) {
            return RemoteEnd.NVSWITCH;
        } else if (type[0] == NVML_NVLINK_DEVICE_TYPE_IBMNPU) {
            return RemoteEnd.IBM_NPU;
        }
        return RemoteEnd.UNKNOWN;
    }

    @Override
    public NvmlTopologyLevel commonAncestor(int first, int second) {
        int[] level = new int[1];
        check(nvmlDeviceGetTopologyCommonAncestor(handles.get(first), handles.get(second), level),
                "nvmlDeviceGetTopologyCommonAncestor");
        return NvmlTopologyLevel.of(level[0]);
    }

    @Override
    public HealthEvents healthEvents() {
        if (!symbols.hasAll(EVENT_WATCHING)) {
            return JavacppNvmlDriver::noEvents;
        }
        var set = new nvmlEventSet_st();
        check(nvmlEventSetCreate(set), "nvmlEventSetCreate");
        long wanted = nvmlEventTypeXidCriticalError | nvmlEventTypeDoubleBitEccError;
        long[] supported = new long[1];
        for (int index = 0; index < handles.size(); index++) {
            var handle = handles.get(index);
            int rc = nvmlDeviceGetSupportedEventTypes(handle, supported);
            long mask = rc == NVML_SUCCESS ? supported[0] & wanted : 0;
            if (mask != 0) {
                rc = nvmlDeviceRegisterEvents(handle, mask, set);
            }
            if (mask == 0 || rc != NVML_SUCCESS) {
                LOG.log(System.Logger.Level.WARNING, "GPU {0}: XID and ECC events not supported ({1}); only NVML failures mark it unhealthy",
                        index, rc == NVML_SUCCESS ? "no such event types" : errorString(rc));
            }
        }
        return new EventSet(set);
    }

    @Override
    public boolean answersNormally(int index) {
        var handle = new nvmlDevice_st();
        if (nvmlDeviceGetHandleByIndex_v2(index, handle) != NVML_SUCCESS) {
            return false;
        }
        byte[] uuid = new byte[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        try (var memory = new nvmlMemory_t()) {
            return nvmlDeviceGetUUID(handle, uuid, uuid.length) == NVML_SUCCESS
                    && cString(uuid).equals(devices.get(index).uuid())
                    && nvmlDeviceGetMemoryInfo(handle, memory) == NVML_SUCCESS;
        }
    }

    /**
     * Each reading is optional twice over: the driver may lack the function (old branches), and the GPU may not
     * support it (no ECC, no row remapper before Ampere); either way that field stays empty.
     */
    @Override
    public ResetSignals resetSignals(int index) {
        var handle = handles.get(index);
        var uncorrected = OptionalLong.empty();
        if (symbols.has(NvmlSymbol.TOTAL_ECC_ERRORS)) {
            long[] count = new long[1];
            if (nvmlDeviceGetTotalEccErrors(handle, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, count) == NVML_SUCCESS) {
                uncorrected = OptionalLong.of(count[0]);
            }
        }
        Optional<Boolean> pending = Optional.empty();
        if (symbols.has(NvmlSymbol.REMAPPED_ROWS)) {
            int[] corrected = new int[1];
            int[] uncorrectedRows = new int[1];
            int[] isPending = new int[1];
            int[] failed = new int[1];
            if (nvmlDeviceGetRemappedRows(handle, corrected, uncorrectedRows, isPending, failed) == NVML_SUCCESS) {
                pending = Optional.of(isPending[0] != 0);
            }
        }
        if (symbols.has(NvmlSymbol.RETIRED_PAGES_PENDING)) {
            int[] state = new int[1];
            if (nvmlDeviceGetRetiredPagesPendingStatus(handle, state) == NVML_SUCCESS) {
                pending = Optional.of(pending.orElse(false) || state[0] == NVML_FEATURE_ENABLED);
            }
        }
        return new ResetSignals(uncorrected, pending);
    }

    @Override
    public void close() {
        int rc = nvmlShutdown();
        if (rc != NVML_SUCCESS) {
            LOG.log(System.Logger.Level.WARNING, "nvmlShutdown failed: {0}", errorString(rc));
        }
    }

    /** Without event support the watcher still probes on schedule, so waiting out the timeout is all there is to do. */
    private static Optional<HealthEvent> noEvents(Duration timeout) {
        try {
            Thread.sleep(timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return Optional.empty();
    }

    private nvmlDevice_st handle(int index) {
        var handle = new nvmlDevice_st();
        check(nvmlDeviceGetHandleByIndex_v2(index, handle), "nvmlDeviceGetHandleByIndex_v2");
        return handle;
    }

    private DeviceInfo describe(int index, nvmlDevice_st handle) {
        byte[] uuid = new byte[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        check(nvmlDeviceGetUUID(handle, uuid, uuid.length), "nvmlDeviceGetUUID");
        byte[] name = new byte[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
        check(nvmlDeviceGetName(handle, name, name.length), "nvmlDeviceGetName");
        int[] major = new int[1];
        int[] minor = new int[1];
        check(nvmlDeviceGetCudaComputeCapability(handle, major, minor), "nvmlDeviceGetCudaComputeCapability");
        long memoryBytes;
        try (var memory = new nvmlMemory_t()) {
            check(nvmlDeviceGetMemoryInfo(handle, memory), "nvmlDeviceGetMemoryInfo");
            memoryBytes = memory.total();
        }
        String busId;
        try (var pci = new nvmlPciInfo_t()) {
            check(nvmlDeviceGetPciInfo_v3(handle, pci), "nvmlDeviceGetPciInfo_v3");
            busId = pci.busId().getString(StandardCharsets.US_ASCII);
        }
        return new DeviceInfo(index, cString(uuid), cString(name), new ComputeCapability(major[0], minor[0]), memoryBytes,
                busId, numaNode(handle, busId));
    }

    private int numaNode(nvmlDevice_st handle, String busId) {
        if (symbols.has(NvmlSymbol.NUMA_NODE)) {
            int[] node = new int[1];
            if (nvmlDeviceGetNumaNodeId(handle, node) == NVML_SUCCESS && node[0] >= 0) {
                return node[0];
            }
        }
        // The kernel knows every PCI device's node; -1 there means a machine without NUMA.
        var file = Path.of("/sys/bus/pci/devices", TopologyAssembler.canonicalBusId(busId), "numa_node");
        try {
            return Math.max(-1, Integer.parseInt(Files.readString(file).strip()));
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    private static void check(int rc, String function) {
        if (rc != NVML_SUCCESS) {
            throw new NvmlException(function, rc, errorString(rc));
        }
    }

    private static String errorString(int rc) {
        var text = nvmlErrorString(rc);
        return text == null || text.isNull() ? "error " + rc : text.getString(StandardCharsets.US_ASCII);
    }

    private static String cString(byte[] bytes) {
        int end = 0;
        while (end < bytes.length && bytes[end] != 0) {
            end++;
        }
        return new String(bytes, 0, end, StandardCharsets.US_ASCII);
    }

    /** One NVML event set, waited on by the health watcher thread only. */
    private final class EventSet implements HealthEvents {
        private final nvmlEventSet_st set;
        private final nvmlEventData_t data = new nvmlEventData_t();

        EventSet(nvmlEventSet_st set) {
            this.set = set;
        }

        @Override
        public Optional<HealthEvent> await(Duration timeout) {
            int rc = nvmlEventSetWait_v2(set, data, (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
            if (rc == NVML_ERROR_TIMEOUT) {
                return Optional.empty();
            }
            check(rc, "nvmlEventSetWait_v2");
            var uuid = uuidOf(data.device());
            if (uuid == null) {
                return Optional.of(new HealthEvent.UnidentifiedDevice("event type " + data.eventType() + " data " + data.eventData()
                        + " on a device NVML did not name"));
            }
            if ((data.eventType() & nvmlEventTypeXidCriticalError) != 0) {
                return Optional.of(new HealthEvent.CriticalXid(uuid, data.eventData()));
            }
            return Optional.of(new HealthEvent.DoubleBitEcc(uuid));
        }

        private String uuidOf(nvmlDevice_st device) {
            if (device == null || device.isNull()) {
                return null;
            }
            for (int i = 0; i < handles.size(); i++) {
                if (handles.get(i).address() == device.address()) {
                    return devices.get(i).uuid();
                }
            }
            return null;
        }

        @Override
        public void close() {
            nvmlEventSetFree(set);
            data.close();
        }
    }
}
