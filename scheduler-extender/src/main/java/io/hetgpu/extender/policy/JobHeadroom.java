package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;

/**
 * The admin's {@code jobHeadroom}: a job of several pods that is not urgent starts only where at least this many GPUs
 * stay free in the cluster once its plan holds its own. Such a job holds many GPUs for long, and evicting any one of its
 * pods restarts it whole: started into the cluster's last free GPUs, it makes the next urgent pod evict the costliest
 * victim there is, and it takes GPUs that the smaller jobs queued behind it would have used and freed again many times
 * over. With room kept, urgent pods arrive into free GPUs and small jobs flow, while the big job starts at the next
 * moment the cluster has slack. A job that already has a member on a node is never held back (it would hold GPUs while
 * it waits); nor is an urgent one, which preempts instead.
 *
 * @param gpus 0 (off) or more: the GPUs that must stay free after the job's plan
 */
public record JobHeadroom(int gpus) {

    public static final JobHeadroom NONE = new JobHeadroom(0);

    public JobHeadroom {
        if (gpus < 0) {
            throw new IllegalArgumentException("jobHeadroom: expected a number of GPUs, 0 (off) or more, got " + gpus);
        }
    }

    public boolean isOn() {
        return gpus > 0;
    }

    /**
     * Why a job whose members all wait for a node must wait for room, or "" when it may be planned now.
     *
     * @param key     the job's key, for the reason
     * @param members every member of the job (none of them on a node)
     * @param nodes   every node of the cluster, with the GPUs other jobs' plans hold taken
     */
    public String heldBack(String key, List<PodRequest> members, List<NodeState> nodes, PriorityThresholds thresholds) {
        if (!isOn() || members.stream().anyMatch(member -> TierPreference.isHighPriority(member, thresholds))) {
            return "";
        }
        int needed = members.stream().mapToInt(PodRequest::gpuCount).sum();
        if (needed == 0) {
            return "";
        }
        int free = 0;
        for (var node : nodes) {
            free += node.freeCount();
        }
        if (free - needed >= gpus) {
            return "";
        }
        return "job " + key + ": " + members.size() + " pods need " + needed + " GPUs, " + free + " free in all; a job below high "
                + "priority starts once " + gpus + " more than it needs are free (policy.jobHeadroom " + gpus
                + ", room kept for urgent pods); no GPU is held for it"
                + members.stream().map(thresholds::ignoredHint).filter(ignored -> !ignored.isEmpty()).findFirst()
                        .map(ignored -> "; " + ignored).orElse("");
    }
}
