package io.hetgpu.testcluster.report;

import java.util.List;

/**
 * Where one pod went and what it got, as the demo reports it.
 *
 * @param pod       namespace/name
 * @param job       the training job (or workload) the pod belongs to
 * @param role      ps, worker, chief, sweep, serving…
 * @param priority  high, normal or low
 * @param node      the node, or empty when the pod is still pending
 * @param rack      the node's rack
 * @param card      the card model of its GPUs, or of the node's GPUs when it holds none; "cpu" on a CPU node
 * @param gpus      the GPU indices on the node it was given
 * @param nvlinkSet whether those GPUs form one NVLink-connected set (always true for one GPU)
 * @param data      distance to its training data
 * @param request   what the pod asks of its GPUs, in words ("2 GPUs, NVLink, newest card first")
 * @param reason    the extender's explanation of where it goes, or "" where no extender explained it
 */
public record Placement(String pod, String job, String role, String priority, String node, String rack, String card,
                        List<Integer> gpus, boolean nvlinkSet, DataDistance data, String request, String reason) {

    public Placement {
        gpus = List.copyOf(gpus);
    }

    /** The table's and the picture's word for the card: a pod without GPUs has none, wherever it runs. */
    public String cardText() {
        if (!isPlaced()) {
            return "";
        }
        if (gpus.isEmpty()) {
            return card.equals("cpu") ? "no GPU" : "no GPU (" + card + " node)";
        }
        return card;
    }

    public boolean isPlaced() {
        return !node.isEmpty();
    }
}
