package io.hetgpu.testcluster.manifests;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;

import java.util.Map;
import java.util.Optional;

/** The pod that a workload object would create, whatever its kind. */
final class PodTemplates {

    private PodTemplates() {
    }

    static Optional<PodTemplateSpec> of(HasMetadata object) {
        return Optional.ofNullable(switch (object) {
            case Pod pod -> new PodTemplateSpec(pod.getMetadata(), pod.getSpec());
            case Deployment d -> d.getSpec().getTemplate();
            case StatefulSet s -> s.getSpec().getTemplate();
            case DaemonSet d -> d.getSpec().getTemplate();
            case Job j -> j.getSpec().getTemplate();
            case CronJob c -> c.getSpec().getJobTemplate().getSpec().getTemplate();
            default -> null;
        });
    }

    /** GPUs the pod asks for (limits, as extended resources are given; requests must then equal them). */
    static int gpus(PodTemplateSpec template, String resourceName) {
        return template.getSpec().getContainers().stream()
                .map(Container::getResources)
                .filter(r -> r != null && r.getLimits() != null)
                .map(r -> r.getLimits().getOrDefault(resourceName, new Quantity("0")))
                .mapToInt(q -> Quantity.getAmountInBytes(q).intValueExact())
                .sum();
    }

    static Container onlyContainer(PodTemplateSpec template) {
        var containers = template.getSpec().getContainers();
        if (containers.size() != 1) {
            throw new AssertionError("expected one container, found " + containers.size());
        }
        return containers.getFirst();
    }

    static Container container(PodTemplateSpec template, String name) {
        return template.getSpec().getContainers().stream().filter(c -> name.equals(c.getName())).findFirst()
                .orElseThrow(() -> new AssertionError("no container named " + name + " in " + template.getSpec().getContainers().stream()
                        .map(Container::getName).toList()));
    }

    /** The container's {@code --name=value} arguments (command and args), by name. */
    static Map<String, String> flags(Container container) {
        var flags = new java.util.LinkedHashMap<String, String>();
        var words = new java.util.ArrayList<String>();
        if (container.getCommand() != null) {
            words.addAll(container.getCommand());
        }
        if (container.getArgs() != null) {
            words.addAll(container.getArgs());
        }
        for (String word : words) {
            if (word.startsWith("--")) {
                int eq = word.indexOf('=');
                if (eq < 0) {
                    throw new AssertionError("flag without '=value': " + word);
                }
                if (flags.put(word.substring(2, eq), word.substring(eq + 1)) != null) {
                    throw new AssertionError("flag given twice: " + word);
                }
            }
        }
        return flags;
    }

    static Map<String, String> annotations(PodTemplateSpec template) {
        var annotations = template.getMetadata() == null ? null : template.getMetadata().getAnnotations();
        return annotations == null ? Map.of() : annotations;
    }
}
