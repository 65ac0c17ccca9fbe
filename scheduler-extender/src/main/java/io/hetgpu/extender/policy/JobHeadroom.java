package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;

/**
 * The admin's {@code jobHeadroom}: a job of several pods, or a pod of several GPUs outside any job, that is not urgent
 * starts only where some GPUs stay free in the cluster once it holds its own. Such a workload holds many GPUs for long,
 * and evicting any one of its pods restarts it whole: started into the cluster's last free GPUs, it makes the next urgent
 * pod evict the costliest victim there is, and it takes GPUs that the one-GPU pods queued behind it would have used and
 * freed again many times over. With room kept, urgent pods arrive into free GPUs and small work flows, while the big
 * workload starts at the next moment the cluster has slack. A job that already has a member on a node is never held back
 * (it would hold GPUs while it waits); nor is an urgent one, which preempts instead; nor a pod of one GPU, which is the
 * small work the room lets through.
 *
 * <p>The room is a number of GPUs or a share of the cluster's: a share holds across cluster sizes where a number
 * would keep a 16-GPU cluster's jobs waiting for ever. It never exceeds what the cluster has beyond the job itself,
 * so a job as large as the cluster starts once the cluster is free rather than never.
 *
 * @param gpus    0 or more: the GPUs that must stay free after the job's plan (or the pod)
 * @param percent 0 up to 50: the same as a percentage of the cluster's GPUs, rounded up (the larger of the two counts)
 */
public record JobHeadroom(int gpus, double percent) {

    public static final JobHeadroom NONE = new JobHeadroom(0, 0);

    /**
     * How many rooms' worth of GPUs the pods of fewer GPUs must wait for before a pod of several GPUs in no job leaves
     * them the room: chosen in the simulator on seeds 1-10 of Gavel's workload at both of its loads (1, or any pod
     * waiting, cost the busy-but-not-overloaded load a tenth of its all-jobs figure; 3 kept it and the overload's gain).
     */
    static final int BACKLOG_ROOMS = 3;

    public JobHeadroom {
        if (gpus < 0) {
            throw new IllegalArgumentException("jobHeadroom: expected a number of GPUs, 0 (off) or more, got " + gpus);
        }
        if (!(percent >= 0 && percent <= 50)) {
            throw new IllegalArgumentException("jobHeadroom: expected a share of the cluster's GPUs from 0% to 50%, got " + percent + "%");
        }
    }

    public JobHeadroom(int gpus) {
        this(gpus, 0);
    }

    public static JobHeadroom percent(double percent) {
        return new JobHeadroom(0, percent);
    }

    /**
     * The configuration's form: a whole number of GPUs ({@code 8}) or a percentage of the cluster's ({@code 10%}).
     *
     * @throws IllegalArgumentException naming the setting and the text when it is neither
     */
    public static JobHeadroom parse(String text) {
        var trimmed = text.strip();
        try {
            if (trimmed.endsWith("%")) {
                return percent(Double.parseDouble(trimmed.substring(0, trimmed.length() - 1).strip()));
            }
            return new JobHeadroom(Integer.parseInt(trimmed));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("jobHeadroom: expected a number of GPUs (8) or a share of the cluster's GPUs (10%), got \""
                    + text + "\"");
        }
    }

    public boolean isOn() {
        return gpus > 0 || percent > 0;
    }

    /** The GPUs kept free in a cluster of this many for a job that needs {@code needed}: never more than it has beyond the job. */
    public int room(int clusterGpus, int needed) {
        int asShare = (int) Math.ceil(percent * clusterGpus / 100 - 1e-9);
        return Math.max(0, Math.min(Math.max(gpus, asShare), clusterGpus - needed));
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
        var gpus = ClusterGpus.of(nodes);
        int room = room(gpus.all(), needed);
        if (gpus.free() - needed >= room) {
            return "";
        }
        return "job " + key + ": " + members.size() + " pods need " + needed + " GPUs, " + gpus.free() + " free in all; a job below high "
                + "priority starts once " + room + " more than it needs are free (policy.jobHeadroom " + this
                + ", room kept for urgent pods); no GPU is held for it"
                + members.stream().map(thresholds::ignoredHint).filter(ignored -> !ignored.isEmpty()).findFirst()
                        .map(ignored -> "; " + ignored).orElse("");
    }

    /** Whether the room concerns this pod on its own: one of several GPUs, below high priority, in no job (a job's plan weighs its members together). */
    public boolean concerns(PodRequest pod, PriorityThresholds thresholds) {
        return isOn() && pod.job().isEmpty() && pod.gpuCount() > 1 && !TierPreference.isHighPriority(pod, thresholds);
    }

    /**
     * Why a pod the room {@link #concerns} must wait for it while the cluster has {@code gpus}, or "" when it may start
     * now: it leaves the room only while pods of fewer GPUs wait for a backlog of at least {@link #BACKLOG_ROOMS} times
     * as many GPUs. With less waiting, the room would mostly keep GPUs idle until the next arrival, and the pod starts
     * into whatever is free; with a backlog of smaller pods, which an overloaded cluster's queue is, those flow first
     * and the pod starts at the next slack.
     */
    public String heldBack(PodRequest pod, ClusterGpus gpus, PriorityThresholds thresholds) {
        if (!concerns(pod, thresholds)) {
            return "";
        }
        int room = room(gpus.all(), pod.gpuCount());
        int backlog = BACKLOG_ROOMS * room;
        if (room == 0 || gpus.free() - pod.gpuCount() >= room || gpus.smallerWaiting() < backlog) {
            return "";
        }
        var ignored = thresholds.ignoredHint(pod);
        return "it needs " + pod.gpuCount() + " GPUs, " + gpus.free() + " free in all, and pods of fewer GPUs wait for " + gpus.smallerWaiting()
                + "; a pod of several GPUs below high priority starts once " + room + " more than it needs are free, or once the smaller "
                + "pods waiting need fewer than " + backlog + " (policy.jobHeadroom " + this + ", room kept for urgent pods and a "
                + "backlog of smaller work)" + (ignored.isEmpty() ? "" : "; " + ignored);
    }

    /** As the configuration writes it: {@code 8}, or {@code 10%} (with {@code 8} GPUs and {@code 10%}: the larger). */
    @Override
    public String toString() {
        if (percent == 0) {
            return Integer.toString(gpus);
        }
        var share = (percent == Math.rint(percent) ? Long.toString((long) percent) : Double.toString(percent)) + "%";
        return gpus == 0 ? share : gpus + " GPUs or " + share;
    }
}
