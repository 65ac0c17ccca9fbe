package io.hetgpu.testcluster.explain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.ExtenderBindingArgs;
import io.hetgpu.extender.wire.ExtenderPreemptionArgs;
import io.hetgpu.testcluster.scheduler.ExtenderCallException;
import io.hetgpu.testcluster.scheduler.ExtenderSettings;
import io.hetgpu.testcluster.scheduler.FilterOutcome;
import io.hetgpu.testcluster.scheduler.SchedulerExtender;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * hetgpu's extender as kube-scheduler calls it, its four verbs called in process instead of over HTTP: the answers of
 * the very code a cluster runs, over whatever cluster view the verbs were built on. Nodes are named, as the shipped
 * entry ({@code nodeCacheCapable: true}) names them: the view holds them whole.
 *
 * @param settings the extender's entry in kube-scheduler's configuration (weight, verbs, ignorable)
 */
record InProcessExtender(ExtenderSettings settings, ExtenderVerbs verbs) implements SchedulerExtender {

    @Override
    public FilterOutcome filter(Pod pod, List<Node> nodes) throws ExtenderCallException {
        var answer = verbs.service().filter(new ExtenderArgs(pod, null, names(nodes)));
        if (answer.error() != null && !answer.error().isEmpty()) {
            throw new ExtenderCallException(answer.error());
        }
        return new FilterOutcome(Objects.requireNonNullElse(answer.nodeNames(), List.of()),
                Objects.requireNonNullElse(answer.failedNodes(), Map.of()),
                Objects.requireNonNullElse(answer.failedAndUnresolvableNodes(), Map.of()));
    }

    @Override
    public Map<String, Long> prioritize(Pod pod, List<Node> nodes) throws ExtenderCallException {
        var answer = verbs.service().prioritize(new ExtenderArgs(pod, null, names(nodes)));
        if (!answer.error().isEmpty()) {
            throw new ExtenderCallException(answer.error());
        }
        var scores = new HashMap<String, Long>();
        answer.priorities().forEach(priority -> scores.put(priority.host(), (long) priority.score()));
        return scores;
    }

    @Override
    public Map<String, Map.Entry<List<String>, Long>> preempt(Pod pod, Map<String, List<Pod>> victims, Map<String, Long> pdbViolations) {
        var proposed = new LinkedHashMap<String, ExtenderPreemptionArgs.MetaVictims>();
        victims.forEach((node, pods) -> proposed.put(node, new ExtenderPreemptionArgs.MetaVictims(
                pods.stream().map(victim -> new ExtenderPreemptionArgs.MetaPod(victim.getMetadata().getUid())).toList(),
                pdbViolations.getOrDefault(node, 0L))));
        var answer = verbs.preemption().answer(new ExtenderPreemptionArgs(pod, null, proposed));
        var kept = new LinkedHashMap<String, Map.Entry<List<String>, Long>>();
        answer.nodeNameToMetaVictims().forEach((node, kept1) -> kept.put(node,
                Map.entry(kept1.pods().stream().map(ExtenderPreemptionArgs.MetaPod::uid).toList(), kept1.numPdbViolations())));
        return kept;
    }

    @Override
    public String bind(Pod pod, String node) {
        var metadata = pod.getMetadata();
        return verbs.binding().bind(new ExtenderBindingArgs(metadata.getName(), metadata.getNamespace(), metadata.getUid(), node)).error();
    }

    private static List<String> names(List<Node> nodes) {
        return nodes.stream().map(node -> node.getMetadata().getName()).toList();
    }
}
