package io.hetgpu.nvml;

import io.hetgpu.gpu.CardModel;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.GpuArchitecture;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.GpuLink;
import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.PcieRelation;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Builds a node's {@link NodeTopology} from what NVML reports: devices, the NVLink links of each, and the
 * PCIe common ancestor of every pair without NVLink.
 *
 * <p>NVLink: a link whose far end is another GPU of this node counts towards that pair. On NVSwitch
 * machines (DGX-2, DGX A100, DGX H100) the far end is a switch, so every GPU with links into switches is
 * on the fabric and reaches every other such GPU at the bandwidth of its links into it. All of a node's
 * switches form one fabric: DGX-2 joins its two baseboards switch to switch, which NVML does not show,
 * so grouping GPUs by the switches they touch would wrongly split it in two.
 */
public final class TopologyAssembler {

    private static final System.Logger LOG = System.getLogger(TopologyAssembler.class.getName());
    private static final long MIB = 1024L * 1024L;

    private TopologyAssembler() {
    }

    public static NodeTopology assemble(NvmlDriver driver) {
        var infos = driver.devices();
        var devices = infos.stream().map(TopologyAssembler::device).toList();
        return new NodeTopology(driver.driverVersion(), driver.cudaDriverVersion(), devices, links(driver, infos));
    }

    static GpuDevice device(NvmlDriver.DeviceInfo info) {
        var cc = info.computeCapability();
        return new GpuDevice(info.uuid(), info.index(), info.name(), CardModel.fromProductName(info.name()),
                GpuArchitecture.of(cc), cc, info.memoryBytes() / MIB, canonicalBusId(info.pciBusId()),
                info.numaNode() < 0 ? GpuDevice.NUMA_UNKNOWN : info.numaNode(), DeviceHealth.HEALTHY);
    }

    static LinkMatrix links(NvmlDriver driver, List<NvmlDriver.DeviceInfo> infos) {
        int n = infos.size();
        var positionByBusId = new HashMap<String, Integer>();
        for (int i = 0; i < n; i++) {
            positionByBusId.put(canonicalBusId(infos.get(i).pciBusId()), i);
        }
        var direct = new int[n][n];
        var fabricLinks = new int[n];
        for (int i = 0; i < n; i++) {
            for (var port : driver.nvlinks(infos.get(i).index())) {
                countLink(i, port, positionByBusId, direct, fabricLinks);
            }
        }
        var matrix = LinkMatrix.builder(n, new GpuLink.Pcie(PcieRelation.ACROSS_SOCKETS));
        for (int i = 0; i < n; i++) {
            for (int j = i + 1; j < n; j++) {
                // Each end counts the links it sees; the larger count survives one end failing to name its peer.
                int links = Math.max(direct[i][j], direct[j][i]);
                if (fabricLinks[i] > 0 && fabricLinks[j] > 0) {
                    // The pair's bandwidth is bounded by the end with fewer links into the fabric.
                    matrix.set(i, j, new GpuLink.Nvlink(Math.min(fabricLinks[i], fabricLinks[j]), true));
                } else if (links > 0) {
                    matrix.set(i, j, new GpuLink.Nvlink(links, false));
                } else {
                    matrix.set(i, j, new GpuLink.Pcie(pcieRelation(driver, infos.get(i), infos.get(j))));
                }
            }
        }
        return matrix.build();
    }

    private static void countLink(int position, NvmlDriver.NvlinkPort port, Map<String, Integer> positionByBusId,
                                  int[][] direct, int[] fabricLinks) {
        var peer = positionByBusId.get(canonicalBusId(port.remotePciBusId()));
        switch (port.remoteEnd()) {
            case NVSWITCH -> fabricLinks[position]++;
            case GPU -> {
                // A GPU this node's NVML does not list (hidden from the container) adds nothing we can hand out.
                if (peer != null && peer != position) {
                    direct[position][peer]++;
                }
            }
            case IBM_NPU -> {
                // A link to a POWER9 CPU carries no GPU-to-GPU traffic.
            }
            case UNKNOWN -> {
                // Drivers that cannot name the far end: a bus ID that is none of our GPUs is a switch.
                if (peer == null) {
                    fabricLinks[position]++;
                } else if (peer != position) {
                    direct[position][peer]++;
                }
            }
        }
    }

    private static PcieRelation pcieRelation(NvmlDriver driver, NvmlDriver.DeviceInfo first, NvmlDriver.DeviceInfo second) {
        try {
            return driver.commonAncestor(first.index(), second.index()).relation();
        } catch (NvmlException | IllegalArgumentException e) {
            // The worst relation never makes the allocator prefer a pair it knows nothing about.
            LOG.log(System.Logger.Level.WARNING, "PCIe relation of GPU {0} and GPU {1} unknown ({2}); assuming SYS",
                    first.index(), second.index(), e.getMessage());
            return PcieRelation.ACROSS_SOCKETS;
        }
    }

    /**
     * NVML writes bus IDs with an 8-digit domain in upper case ({@code 00000000:07:00.0}), sysfs and
     * {@code lspci} with 4 digits in lower case ({@code 0000:07:00.0}); hetgpu uses the latter everywhere.
     */
    public static String canonicalBusId(String nvmlBusId) {
        var text = nvmlBusId.strip().toLowerCase(Locale.ROOT);
        int colon = text.indexOf(':');
        if (colon < 0 || text.indexOf(':', colon + 1) < 0) {
            return text;
        }
        try {
            int domain = Integer.parseUnsignedInt(text.substring(0, colon), 16);
            return String.format("%04x", domain) + text.substring(colon);
        } catch (NumberFormatException e) {
            return text;
        }
    }
}
