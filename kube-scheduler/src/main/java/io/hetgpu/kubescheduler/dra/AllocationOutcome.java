package io.hetgpu.kubescheduler.dra;

import java.util.List;

/** The allocator's answer for one pod's claims on one node. */
public sealed interface AllocationOutcome {

    /** One allocation per claim, in the claims' order. */
    record Allocated(List<ClaimAllocation> claims) implements AllocationOutcome {

        public Allocated {
            claims = List.copyOf(claims);
        }
    }

    /** No allocation on this node: why, naming the claim, request, class or selector at fault. */
    record Unallocatable(String reason) implements AllocationOutcome {
    }
}
