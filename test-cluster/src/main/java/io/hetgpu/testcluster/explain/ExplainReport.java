package io.hetgpu.testcluster.explain;

import java.util.List;

/**
 * Everything one explain prints.
 *
 * @param cluster       where the cluster was read ("https://10.0.0.1:6443", "the demo cluster")
 * @param configuration where the scheduler's and the extender's configuration came from
 * @param scheduler     the scheduler profile's name
 * @param weight        the extender's weight in kube-scheduler's configuration
 * @param nodes         how many nodes the cluster has
 * @param notes         what was read without, or left out
 * @param pods          each pod given or named, in the order kube-scheduler's queue takes them
 */
record ExplainReport(String cluster, String configuration, String scheduler, long weight, int nodes, List<String> notes,
                     List<PodExplanation> pods) {

    ExplainReport {
        notes = List.copyOf(notes);
        pods = List.copyOf(pods);
    }
}
