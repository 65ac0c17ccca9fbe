package io.hetgpu.extender.cluster;

import io.hetgpu.extender.job.JobMembership;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.extender.job.JobSize;
import io.hetgpu.gpu.Quote;
import java.util.ArrayList;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Function;

/**
 * Which object's count sizes a job, and what a reason says when none can be read: the one rule, over the objects of each
 * kind however a source holds them (informers followed for ever, or one listing).
 */
final class JobObjectCounts {

    /** One kind's objects as a source holds them. */
    interface KindTable {
        /** Why no count of this kind can be read now (not served, refused, not listed yet); null when counts can be read. */
        String standing();

        /** The count the object {@code namespace/name} gives, or null when there is no such object. */
        ObjectCount count(String namespace, String name);
    }

    /** The count, or why it is unknown. */
    sealed interface Answer permits Known, Unknown {
    }

    record Known(int members) implements Answer {
    }

    record Unknown(String why) implements Answer {
    }

    private JobObjectCounts() {
    }

    /** The count, or empty when it is unknown. */
    static OptionalInt membersOf(JobMembership job, Function<JobObjectKind, KindTable> tables) {
        return answer(job, tables) instanceof Known known ? OptionalInt.of(known.members()) : OptionalInt.empty();
    }

    /** Why the count is unknown, or empty when it is known. */
    static Optional<String> whyUnknown(JobMembership job, Function<JobObjectKind, KindTable> tables) {
        return answer(job, tables) instanceof Unknown unknown ? Optional.of(unknown.why()) : Optional.empty();
    }

    private static Answer answer(JobMembership job, Function<JobObjectKind, KindTable> tables) {
        return switch (job.size()) {
            case JobSize.Stated stated -> new Known(stated.members());
            case JobSize.Unstated unstated -> new Unknown(unstated.hint());
            case JobSize.InObject in -> switch (job.source()) {
                case HETGPU -> new Unknown(in.describe());
                case KUBE_POD_GROUP -> lookUp(tables, JobObjectKind.KUBE_POD_GROUP, job.namespace(), in.name(), null);
                case KUBE_WORKLOAD -> lookUp(tables, JobObjectKind.WORKLOAD, job.namespace(), in.name(),
                        JobMembershipReader.WorkloadGang.of(job).map(JobMembershipReader.WorkloadGang::podGroup).orElse(""));
                case VOLCANO_POD_GROUP -> lookUp(tables, JobObjectKind.VOLCANO_POD_GROUP, job.namespace(), in.name(), null);
                case COSCHEDULING_POD_GROUP -> lookUp(tables, JobObjectKind.COSCHEDULING_POD_GROUP, job.namespace(), in.name(), null);
                case KUBEFLOW_TRAINING -> training(tables, in.kind(), job.namespace(), in.name());
                case JOBSET -> lookUp(tables, JobObjectKind.JOBSET, job.namespace(), in.name(), null);
                case INDEXED_JOB -> lookUp(tables, JobObjectKind.JOB, job.namespace(), in.name(), null);
            };
        };
    }

    /** The count {@code namespace/name} of {@code kind} gives ({@code podGroup}'s, for a Workload). */
    private static Answer lookUp(Function<JobObjectKind, KindTable> tables, JobObjectKind kind, String namespace, String name, String podGroup) {
        var one = tables.apply(kind);
        var standing = one.standing();
        if (standing != null) {
            return new Unknown(standing);
        }
        var count = one.count(namespace, name);
        var object = kind.name() + " " + Quote.of(name) + " in namespace " + namespace;
        if (count == null) {
            return new Unknown(kind.name() + " " + Quote.of(name) + " not found in namespace " + namespace);
        }
        if (podGroup != null && count instanceof ObjectCount.ByPodGroup groups) {
            var group = groups.groups().get(podGroup);
            if (group == null) {
                var list = kind == JobObjectKind.WORKLOAD_TEMPLATES ? "template " + Quote.of(podGroup) + " in spec.podGroupTemplates"
                        : "pod group " + Quote.of(podGroup) + " in spec.podGroups";
                return new Unknown(object + " has no " + list + " (it has "
                        + Quote.cut(String.join(", ", new java.util.TreeSet<>(groups.groups().keySet())), 200) + ")");
            }
            count = group;
        }
        return switch (count) {
            case ObjectCount.Members members -> new Known(members.members());
            case ObjectCount.Unreadable unreadable -> new Unknown(object + " " + unreadable.reason());
            case ObjectCount.ByPodGroup groups -> new Unknown(object + " has pod groups, not one count");
            // A Workload's template holds no reference, so this looks up once, not on and on.
            case ObjectCount.FromTemplate ref -> switch (lookUp(tables, JobObjectKind.WORKLOAD_TEMPLATES, namespace, ref.workload(), ref.template())) {
                case Known known -> known;
                case Unknown unknown -> new Unknown(object + " states no spec.schedulingPolicy of its own and was made from template "
                        + Quote.of(ref.template()) + " of Workload " + Quote.of(ref.workload()) + " (" + ref.field() + "): " + unknown.why());
            };
        };
    }

    /**
     * A Kubeflow training job, by the kind of the pod's controller. The MPI operator's launcher is a Job's pod, and a pod
     * may have no controller: then the one training job of that name, of any kind, gives the count.
     */
    private static Answer training(Function<JobObjectKind, KindTable> tables, String kindName, String namespace, String name) {
        for (var kind : JobObjectKind.KUBEFLOW) {
            if (kind.kind().equals(kindName)) {
                return lookUp(tables, kind, namespace, name, null);
            }
        }
        var found = new ArrayList<JobObjectKind>();
        for (var kind : JobObjectKind.KUBEFLOW) {
            var one = tables.apply(kind);
            if (one.standing() == null && one.count(namespace, name) != null) {
                found.add(kind);
            }
        }
        var kinds = String.join(", ", JobObjectKind.KUBEFLOW.stream().map(JobObjectKind::kind).toList());
        if (found.size() == 1) {
            return lookUp(tables, found.getFirst(), namespace, name, null);
        }
        if (found.isEmpty()) {
            return new Unknown("no " + kinds + " " + Quote.of(name) + " found in namespace " + namespace
                    + " (the pod's controller is " + Quote.of(kindName) + ")");
        }
        return new Unknown("several training jobs are named " + Quote.of(name) + " in namespace " + namespace + " ("
                + String.join(", ", found.stream().map(JobObjectKind::kind).toList()) + ") and the pod's controller, "
                + Quote.of(kindName) + ", is none of them");
    }
}
