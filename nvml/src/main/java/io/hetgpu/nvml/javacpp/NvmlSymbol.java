package io.hetgpu.nvml.javacpp;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Every libnvidia-ml function hetgpu calls, and what happens when the installed driver lacks it. This is
 * the one place that says which call needs which probe: JavaCPP binds all of NVML's functions lazily, so
 * calling one the driver does not export kills the JVM ("symbol lookup error"). K80 nodes stay on the
 * 470 branch, so anything newer must be probed before use.
 *
 * <p>Required functions exist in every driver since branch 450 (the oldest hetgpu supports); optional
 * ones are newer and each has a fallback.
 */
public enum NvmlSymbol {
    INIT("nvmlInit_v2"),
    SHUTDOWN("nvmlShutdown"),
    ERROR_STRING("nvmlErrorString"),
    DRIVER_VERSION("nvmlSystemGetDriverVersion"),
    CUDA_DRIVER_VERSION("nvmlSystemGetCudaDriverVersion_v2"),
    DEVICE_COUNT("nvmlDeviceGetCount_v2"),
    HANDLE_BY_INDEX("nvmlDeviceGetHandleByIndex_v2"),
    UUID("nvmlDeviceGetUUID"),
    NAME("nvmlDeviceGetName"),
    COMPUTE_CAPABILITY("nvmlDeviceGetCudaComputeCapability"),
    MEMORY("nvmlDeviceGetMemoryInfo"),
    PCI_INFO("nvmlDeviceGetPciInfo_v3"),
    COMMON_ANCESTOR("nvmlDeviceGetTopologyCommonAncestor"),

    NVLINK_STATE("nvmlDeviceGetNvLinkState", "no NVLink is reported; GPU pairs get their PCIe relation"),
    NVLINK_REMOTE_PCI("nvmlDeviceGetNvLinkRemotePciInfo_v2", "no NVLink is reported; GPU pairs get their PCIe relation"),
    NVLINK_REMOTE_DEVICE_TYPE("nvmlDeviceGetNvLinkRemoteDeviceType",
            "NVSwitches are recognised by remote bus IDs that are not GPUs of this node"),
    NUMA_NODE("nvmlDeviceGetNumaNodeId", "the NUMA node is read from /sys/bus/pci/devices/<bus id>/numa_node"),
    EVENT_SET_CREATE("nvmlEventSetCreate", "no XID or ECC events are watched; devices turn unhealthy only if NVML fails"),
    SUPPORTED_EVENT_TYPES("nvmlDeviceGetSupportedEventTypes", "no XID or ECC events are watched; devices turn unhealthy only if NVML fails"),
    REGISTER_EVENTS("nvmlDeviceRegisterEvents", "no XID or ECC events are watched; devices turn unhealthy only if NVML fails"),
    EVENT_SET_WAIT("nvmlEventSetWait_v2", "no XID or ECC events are watched; devices turn unhealthy only if NVML fails"),
    EVENT_SET_FREE("nvmlEventSetFree", "no XID or ECC events are watched; devices turn unhealthy only if NVML fails"),
    TOTAL_ECC_ERRORS("nvmlDeviceGetTotalEccErrors",
            "a GPU reset is not seen in ECC counters; GPUs held for a reset wait for other evidence or a reboot"),
    REMAPPED_ROWS("nvmlDeviceGetRemappedRows",
            "pending row remappings are not seen; GPUs held for a reset wait for other evidence or a reboot"),
    RETIRED_PAGES_PENDING("nvmlDeviceGetRetiredPagesPendingStatus",
            "pending page retirements are not seen; GPUs held for a reset wait for other evidence or a reboot");

    private static final System.Logger LOG = System.getLogger(NvmlSymbol.class.getName());

    private final String symbol;
    private final String fallback;

    NvmlSymbol(String symbol) {
        this(symbol, null);
    }

    NvmlSymbol(String symbol, String fallback) {
        this.symbol = symbol;
        this.fallback = fallback;
    }

    /** The C symbol in libnvidia-ml. */
    public String symbol() {
        return symbol;
    }

    public boolean required() {
        return fallback == null;
    }

    /** What hetgpu does instead when the driver lacks this function; null for required ones. */
    public String fallback() {
        return fallback;
    }

    /** The symbols an installed driver exports, probed once when NVML is opened. */
    public record Probe(Set<NvmlSymbol> missing) {

        public Probe {
            missing = missing.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(missing));
        }

        /** Looks every symbol up and logs, once, each optional feature this driver does not support. */
        public static Probe of(Predicate<String> exported) {
            var missing = EnumSet.noneOf(NvmlSymbol.class);
            for (var symbol : values()) {
                if (!exported.test(symbol.symbol)) {
                    missing.add(symbol);
                }
            }
            var probe = new Probe(missing);
            for (var symbol : missing) {
                if (!symbol.required()) {
                    LOG.log(System.Logger.Level.INFO, "{0} is not supported by this driver: {1}", symbol.symbol, symbol.fallback);
                }
            }
            return probe;
        }

        public boolean has(NvmlSymbol symbol) {
            return !missing.contains(symbol);
        }

        /** True when every symbol of the feature is there (e.g. all of event watching). */
        public boolean hasAll(List<NvmlSymbol> symbols) {
            return symbols.stream().allMatch(this::has);
        }

        public List<String> missingRequired() {
            return missing.stream().filter(NvmlSymbol::required).map(NvmlSymbol::symbol).sorted().toList();
        }
    }
}
