package io.hetgpu.gpu.allocation;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** Sets of device positions as bit masks: a node has at most 64 GPUs, and masks keep the allocator allocation-free. */
public final class DeviceMask {

    public static final int MAX_DEVICES = 64;

    private DeviceMask() {
    }

    public static long of(Collection<Integer> positions) {
        long mask = 0;
        for (int position : positions) {
            if (position < 0 || position >= MAX_DEVICES) {
                throw new IllegalArgumentException("device position must be in 0.." + (MAX_DEVICES - 1) + ", got " + position);
            }
            mask |= 1L << position;
        }
        return mask;
    }

    public static long all(int size) {
        return size >= MAX_DEVICES ? -1L : (1L << size) - 1;
    }

    public static List<Integer> positions(long mask) {
        var positions = new ArrayList<Integer>(Long.bitCount(mask));
        for (long rest = mask; rest != 0; rest &= rest - 1) {
            positions.add(Long.numberOfTrailingZeros(rest));
        }
        return positions;
    }
}
