package io.hetgpu.gpu;

/**
 * How two GPUs without NVLink reach each other over PCIe: the levels of
 * {@code nvmlDeviceGetTopologyCommonAncestor} and {@code nvidia-smi topo -m}, nearest first.
 * Scores are the scale NVIDIA's device plugin allocator uses (100 per NVLink link, 10 to 60 by PCIe distance), so sets
 * rank the same way everywhere.
 */
public enum PcieRelation {
    /** Two GPUs on one board (K80): NVML's TOPOLOGY_INTERNAL. nvidia-smi has no token; hetgpu writes BRD. */
    SAME_BOARD("BRD", 60),
    /** Behind one PCIe switch (PIX). */
    SINGLE_SWITCH("PIX", 50),
    /** Behind several PCIe switches, without the host bridge (PXB). */
    MULTIPLE_SWITCHES("PXB", 40),
    /** Through the PCIe host bridge of one CPU (PHB). */
    HOST_BRIDGE("PHB", 30),
    /** Across host bridges within one NUMA node (NODE). */
    SAME_NUMA_NODE("NODE", 20),
    /** Across the CPU interconnect (SYS). */
    ACROSS_SOCKETS("SYS", 10);

    private final String token;
    private final int score;

    PcieRelation(String token, int score) {
        this.token = token;
        this.score = score;
    }

    /** The {@code nvidia-smi topo -m} token. */
    public String token() {
        return token;
    }

    public int score() {
        return score;
    }

    public static PcieRelation fromToken(String token) {
        for (var relation : values()) {
            if (relation.token.equals(token)) {
                return relation;
            }
        }
        throw new IllegalArgumentException("unknown PCIe relation \"" + token + "\" (expected BRD, PIX, PXB, PHB, NODE or SYS)");
    }
}
