package io.hetgpu.nvml;

import io.hetgpu.gpu.ComputeCapability;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The NVML calls hetgpu makes, as plain values. The real implementation is
 * {@link io.hetgpu.nvml.javacpp.JavacppNvmlDriver}; tests use fakes that reproduce known machines.
 * Every method may throw {@link NvmlException}. Features the installed driver lacks are not errors:
 * the implementation falls back (see {@link io.hetgpu.nvml.javacpp.NvmlSymbol}).
 */
public interface NvmlDriver extends AutoCloseable {

    /** {@code 535.104.05}. */
    String driverVersion();

    /** The CUDA version the driver supports, {@code 12.2}. */
    String cudaDriverVersion();

    /** Every GPU NVML sees, ordered by index. */
    List<DeviceInfo> devices();

    /** The active NVLink links of the device at this index; empty for PCIe-only cards. */
    List<NvlinkPort> nvlinks(int index);

    /** The closest common PCIe ancestor of two devices (by index). */
    NvmlTopologyLevel commonAncestor(int first, int second);

    /** Registers for critical XIDs and double-bit ECC errors on every device that supports them. */
    HealthEvents healthEvents();

    /** Whether the device answers basic queries (handle, UUID, memory) without error right now. */
    boolean answersNormally(int index);

    /** What NVML shows right now of the device's uncorrectable-error state; empty fields where it cannot say. */
    ResetSignals resetSignals(int index);

    /** Shuts NVML down; no call may follow. */
    @Override
    void close();

    /**
     * One GPU as NVML reports it.
     *
     * @param pciBusId as NVML writes it ({@code 00000000:07:00.0})
     * @param numaNode -1 when neither NVML nor sysfs knows it
     */
    record DeviceInfo(int index, String uuid, String name, ComputeCapability computeCapability, long memoryBytes,
                      String pciBusId, int numaNode) {
        public DeviceInfo {
            Objects.requireNonNull(uuid, "uuid");
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(computeCapability, "computeCapability");
            Objects.requireNonNull(pciBusId, "pciBusId");
        }
    }

    /** What sits at the far end of an NVLink link. */
    enum RemoteEnd {
        GPU, NVSWITCH, IBM_NPU,
        /** The driver cannot say ({@code nvmlDeviceGetNvLinkRemoteDeviceType} missing or unsupported). */
        UNKNOWN
    }

    /**
     * One active NVLink link.
     *
     * @param remotePciBusId the PCI bus ID of the far end, as NVML writes it
     */
    record NvlinkPort(int link, String remotePciBusId, RemoteEnd remoteEnd) {
        public NvlinkPort {
            Objects.requireNonNull(remotePciBusId, "remotePciBusId");
            Objects.requireNonNull(remoteEnd, "remoteEnd");
        }
    }

    /**
     * The NVML readings that change when a GPU is reset (or its driver reloaded), the only evidence short of a
     * reboot that a GPU needing a reset has had one.
     *
     * @param volatileUncorrectedEcc uncorrected ECC errors since the driver loaded or the GPU was last reset
     *                               ({@code nvmlDeviceGetTotalEccErrors}, volatile); empty without ECC or the function
     * @param memoryRepairPending    whether a row remapping ({@code nvmlDeviceGetRemappedRows}) or a page retirement
     *                               ({@code nvmlDeviceGetRetiredPagesPendingStatus}) waits for the next reset; empty when
     *                               the GPU or the driver supports neither
     */
    record ResetSignals(OptionalLong volatileUncorrectedEcc, Optional<Boolean> memoryRepairPending) {
        public static final ResetSignals UNKNOWN = new ResetSignals(OptionalLong.empty(), Optional.empty());

        public ResetSignals {
            Objects.requireNonNull(volatileUncorrectedEcc, "volatileUncorrectedEcc");
            Objects.requireNonNull(memoryRepairPending, "memoryRepairPending");
        }

        public static ResetSignals of(long volatileUncorrectedEcc, boolean memoryRepairPending) {
            return new ResetSignals(OptionalLong.of(volatileUncorrectedEcc), Optional.of(memoryRepairPending));
        }
    }

    /** A registered NVML event set. */
    interface HealthEvents extends AutoCloseable {
        /** Waits up to {@code timeout} for the next event; empty on timeout. */
        Optional<HealthEvent> await(Duration timeout);

        @Override
        default void close() {
        }
    }

    /** An event that may make a device unhealthy. */
    sealed interface HealthEvent {
        record CriticalXid(String uuid, long xid) implements HealthEvent {
        }

        record DoubleBitEcc(String uuid) implements HealthEvent {
        }

        /** NVML reported an error but could not name the device: every device is suspect. */
        record UnidentifiedDevice(String detail) implements HealthEvent {
        }
    }
}
