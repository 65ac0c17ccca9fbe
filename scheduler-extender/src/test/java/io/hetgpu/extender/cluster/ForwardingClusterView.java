package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.model.DataLocality;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import java.util.List;
import java.util.Set;

/** A view that answers as another does: tests override what they watch or hold back (the contexts a plan reads). */
public class ForwardingClusterView implements ClusterView {

    private final ClusterView view;

    public ForwardingClusterView(ClusterView view) {
        this.view = view;
    }

    @Override
    public boolean synced() {
        return view.synced();
    }

    @Override
    public boolean knowsNodes() {
        return view.knowsNodes();
    }

    @Override
    public NodeSnapshot nodes() {
        return view.nodes();
    }

    @Override
    public PlacementContext contextOf(PodRequest pod) {
        return view.contextOf(pod);
    }

    @Override
    public List<DataLocality> volumesOf(PodRequest pod) {
        return view.volumesOf(pod);
    }

    @Override
    public List<Pod> jobPods(String jobKey) {
        return view.jobPods(jobKey);
    }

    @Override
    public Set<String> jobKeys() {
        return view.jobKeys();
    }

    @Override
    public int waitingGpusBelow(int gpus) {
        return view.waitingGpusBelow(gpus);
    }

    @Override
    public Pod podByUid(String uid) {
        return view.podByUid(uid);
    }

    @Override
    public io.hetgpu.extender.model.DisruptionBudgets budgets() {
        return view.budgets();
    }

    @Override
    public io.hetgpu.extender.model.DisruptionBudgets.PodLabels budgetLabelsOf(String uid) {
        return view.budgetLabelsOf(uid);
    }
}
