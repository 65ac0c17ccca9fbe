package io.hetgpu.kubescheduler;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * cpu and memory as kube-scheduler's NodeResourcesFit and BalancedAllocation count them: milli-cores
 * and bytes, whole numbers. A pod's request, what a node's pods have requested, or a node's allocatable.
 *
 * @param milliCpu cpu in thousandths of a core
 * @param memory   memory in bytes
 */
public record CpuMemory(long milliCpu, long memory) {

    public static final CpuMemory ZERO = new CpuMemory(0, 0);
    private static final long GIBIBYTE = 1L << 30;

    /** {@code cores} cpu and {@code gibibytes} memory, as a pod spec or a Node's allocatable writes them ("4", "32Gi"). */
    public static CpuMemory of(long cores, long gibibytes) {
        return new CpuMemory(cores * 1000, gibibytes * GIBIBYTE);
    }

    /** The cpu and memory of a request; cpu rounded up to whole milli-cores, as Quantity.MilliValue does. */
    public static CpuMemory of(ResourceRequest request) {
        return of(request.get("cpu"), request.get("memory"));
    }

    /** From Quantity amounts (cores and bytes). */
    public static CpuMemory of(BigDecimal cores, BigDecimal bytes) {
        return new CpuMemory(cores.movePointRight(3).setScale(0, RoundingMode.CEILING).longValueExact(),
                bytes.setScale(0, RoundingMode.CEILING).longValueExact());
    }

    public CpuMemory plus(CpuMemory other) {
        return new CpuMemory(milliCpu + other.milliCpu, memory + other.memory);
    }

    public CpuMemory minus(CpuMemory other) {
        return new CpuMemory(milliCpu - other.milliCpu, memory - other.memory);
    }

    /** Whether this much fits in {@code allocatable}: NodeResourcesFit's filter for cpu and memory. */
    public boolean fitsIn(CpuMemory allocatable) {
        return milliCpu <= allocatable.milliCpu && memory <= allocatable.memory;
    }
}
