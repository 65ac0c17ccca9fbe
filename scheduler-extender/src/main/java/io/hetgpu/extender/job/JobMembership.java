package io.hetgpu.extender.job;

import java.util.Objects;
import java.util.OptionalInt;

/**
 * The job a pod belongs to, read from what its controller or its user wrote on it.
 *
 * @param namespace the pod's namespace; jobs never span namespaces
 * @param name      the job's name: the group, Workload, training job, JobSet or Job the convention names
 * @param source    the convention it was read from
 * @param role      the pod's part in the job (ps, worker, a replicated job's or pod group's name…), lower case; "" for none
 * @param index     the pod's number within its role where the convention numbers pods (a replica or completion index)
 * @param size      the job's member count, or where it is to be read
 */
public record JobMembership(String namespace, String name, JobSource source, String role, OptionalInt index, JobSize size) {

    public JobMembership {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(index, "index");
        Objects.requireNonNull(size, "size");
        if (name.isBlank()) {
            throw new IllegalArgumentException("name must not be blank");
        }
    }

    /**
     * What pods of one job share: namespace and name. Two conventions naming the same job (a TFJob and the Volcano
     * PodGroup its operator made under the same name, a TrainJob and its JobSet) give the same key, on purpose.
     */
    public String key() {
        return namespace + "/" + name;
    }
}
