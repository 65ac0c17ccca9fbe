package io.hetgpu.testcluster.explain;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.hetgpu.extender.cluster.ListedClusterView;
import io.hetgpu.extender.cluster.PodBinder;
import java.time.Instant;

/**
 * The bind verb's API calls played on a copy of the cluster: the record and the binding land in the copy, never in the
 * cluster it was listed from. One caller at a time (the scheduler driver binds one pod after another), so the
 * resourceVersion precondition a real API server checks has nothing to catch here.
 */
record CopyBinder(ListedClusterView copy) implements PodBinder {

    @Override
    public Pod pod(String namespace, String name) {
        var pod = copy.pod(namespace, name);
        return pod == null ? null : new PodBuilder(pod).build();
    }

    @Override
    public void annotate(String namespace, String name, String resourceVersion, String key, String value) throws Refusal {
        copy.put(new PodBuilder(existing(namespace, name)).editMetadata().addToAnnotations(key, value).endMetadata().build());
    }

    @Override
    public void removeAnnotation(String namespace, String name, String key, String value) throws Refusal {
        var pod = existing(namespace, name);
        var annotations = pod.getMetadata().getAnnotations();
        if (annotations != null && value.equals(annotations.get(key))) {
            copy.put(new PodBuilder(pod).editMetadata().removeFromAnnotations(key).endMetadata().build());
        }
    }

    @Override
    public void bind(String namespace, String name, String uid, String node) throws Refusal {
        copy.put(bound(existing(namespace, name), node));
    }

    /** The pod bound to {@code node} as the API server writes a binding: the node, and PodScheduled now. */
    static Pod bound(Pod pod, String node) {
        return new PodBuilder(pod).editSpec().withNodeName(node).endSpec().editOrNewStatus()
                .addToConditions(new PodConditionBuilder().withType("PodScheduled").withStatus("True")
                        .withLastTransitionTime(Instant.now().toString()).build())
                .endStatus().build();
    }

    private Pod existing(String namespace, String name) throws Refusal {
        var pod = copy.pod(namespace, name);
        if (pod == null) {
            throw new Refusal(404, "pods \"" + name + "\" not found in namespace " + namespace);
        }
        return pod;
    }
}
