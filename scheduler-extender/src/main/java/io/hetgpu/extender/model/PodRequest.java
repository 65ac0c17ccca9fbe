package io.hetgpu.extender.model;

import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.tier.CardRequirements;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What the placement policy needs to know about a pod, parsed once from its spec, labels and annotations.
 *
 * @param namespace            the pod's namespace
 * @param name                 the pod's name
 * @param uid                  the pod's UID ("" when the API server has not assigned one yet)
 * @param gpuCount             GPUs the pod needs, by the Kubernetes rules for init containers
 * @param cards                what it asks of each card: models, the weakest model, models excluded, memory, compute
 *                             capability ({@link CardRequirements#ANY} for nothing)
 * @param requireNvlink        all GPUs must form one NVLink-connected set
 * @param specPriority         {@code spec.priority} (0 when unset, as Kubernetes defaults it)
 * @param priorityHint         the {@code hetgpu.io/priority} annotation, which may lower the level {@code spec.priority} gives
 *                             and, only in a trusted namespace, raise it ({@code policy.PriorityThresholds})
 * @param preference           the {@code hetgpu.io/gpu-preference} annotation, which wins over both
 * @param job                  the job the pod belongs to ("" for none)
 * @param role                 its role in the job (ps, worker, …; "" for none)
 * @param claimNames           names of the PersistentVolumeClaims it mounts, in its namespace
 * @param workload             the {@code hetgpu.io/workload} annotation: the pod's workload class ("" for none)
 * @param preempts             whether kube-scheduler may preempt for it ({@code spec.preemptionPolicy} other than
 *                             {@code Never}): only such a pod may refuse free cards for faster ones behind an eviction
 * @param claimNote            what the extender could not read of the pod's ResourceClaims, or which of a prioritized
 *                             list it read them as ("" when it read everything): added to the reasons it refuses nodes
 *                             with, since kube-scheduler's allocator, not hetgpu, decides what it left unread
 */
public record PodRequest(
        String namespace,
        String name,
        String uid,
        int gpuCount,
        CardRequirements cards,
        boolean requireNvlink,
        int specPriority,
        PriorityHint priorityHint,
        GpuPreference preference,
        String job,
        String role,
        List<String> claimNames,
        String workload,
        boolean preempts,
        String claimNote) {

    public static final ComputeCapability ANY_COMPUTE_CAPABILITY = CardRequirements.ANY_COMPUTE_CAPABILITY;

    public PodRequest {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(uid, "uid");
        Objects.requireNonNull(cards, "cards");
        Objects.requireNonNull(priorityHint, "priorityHint");
        Objects.requireNonNull(preference, "preference");
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(role, "role");
        claimNames = List.copyOf(claimNames);
        Objects.requireNonNull(workload, "workload");
        Objects.requireNonNull(claimNote, "claimNote");
        if (gpuCount < 0) {
            throw new IllegalArgumentException("gpuCount must be >= 0, got " + gpuCount);
        }
    }

    /** A pod whose request the extender read whole (no ResourceClaim left unread). */
    public PodRequest(String namespace, String name, String uid, int gpuCount, CardRequirements cards, boolean requireNvlink,
                      int specPriority, PriorityHint priorityHint, GpuPreference preference, String job, String role,
                      List<String> claimNames, String workload, boolean preempts) {
        this(namespace, name, uid, gpuCount, cards, requireNvlink, specPriority, priorityHint, preference, job, role, claimNames,
                workload, preempts, "");
    }

    /** A pod that kube-scheduler may preempt for, as Kubernetes defaults {@code spec.preemptionPolicy}. */
    public PodRequest(String namespace, String name, String uid, int gpuCount, CardRequirements cards, boolean requireNvlink,
                      int specPriority, PriorityHint priorityHint, GpuPreference preference, String job, String role,
                      List<String> claimNames, String workload) {
        this(namespace, name, uid, gpuCount, cards, requireNvlink, specPriority, priorityHint, preference, job, role, claimNames,
                workload, true);
    }

    /** A pod that asks for card models, memory and compute capability only (a trace's job, a test's pod). */
    public PodRequest(String namespace, String name, String uid, int gpuCount, Set<String> models, long minMemoryMiB,
                      ComputeCapability minComputeCapability, boolean requireNvlink, int specPriority, PriorityHint priorityHint,
                      GpuPreference preference, String job, String role, List<String> claimNames, String workload) {
        this(namespace, name, uid, gpuCount, new CardRequirements(models, minMemoryMiB, minComputeCapability), requireNvlink,
                specPriority, priorityHint, preference, job, role, claimNames, workload);
    }

    /** A pod that names no workload class. */
    public PodRequest(String namespace, String name, String uid, int gpuCount, Set<String> models, long minMemoryMiB,
                      ComputeCapability minComputeCapability, boolean requireNvlink, int specPriority, PriorityHint priorityHint,
                      GpuPreference preference, String job, String role, List<String> claimNames) {
        this(namespace, name, uid, gpuCount, models, minMemoryMiB, minComputeCapability, requireNvlink, specPriority,
                priorityHint, preference, job, role, claimNames, "");
    }

    /** The card models the pod accepts; empty = any. */
    public Set<String> models() {
        return cards.models();
    }

    /** Least memory per GPU; 0 = any. */
    public long minMemoryMiB() {
        return cards.minMemoryMiB();
    }

    /** Least compute capability; {@link #ANY_COMPUTE_CAPABILITY} = any. */
    public ComputeCapability minComputeCapability() {
        return cards.minComputeCapability();
    }

    /** This pod with its workload class set. */
    public PodRequest withWorkload(String newWorkload) {
        return new PodRequest(namespace, name, uid, gpuCount, cards, requireNvlink, specPriority, priorityHint, preference, job, role,
                claimNames, newWorkload, preempts, claimNote);
    }

    /**
     * What decides whether a node fits the pod: two pods of one shape fit the same nodes. The workload
     * class is part of it because a minimum speed share refuses cards per class; the claim note because refusals say it.
     */
    public record Shape(int gpuCount, CardRequirements cards, boolean requireNvlink, String workload, String claimNote) {
    }

    public Shape shape() {
        return new Shape(gpuCount, cards, requireNvlink, workload, claimNote);
    }

    public boolean needsGpus() {
        return gpuCount > 0;
    }

    public String displayName() {
        return namespace + "/" + name;
    }

    /** A pod with only a GPU count and everything else left to defaults; for tests and callers that know no more. */
    public static PodRequest gpus(String name, int count) {
        return new PodRequest("default", name, "", count, Set.of(), 0, ANY_COMPUTE_CAPABILITY, false, 0,
                PriorityHint.UNSET, GpuPreference.UNSET, "", "", List.of());
    }
}
