package io.hetgpu.extender.model;

/**
 * Another pod of the same job that no node holds yet (a worker still in kube-scheduler's queue, created with this one by
 * its operator): where it can follow decides how close the job's pods end up.
 *
 * @param podName its name
 * @param gpus    the GPUs it asks for
 */
public record WaitingPeer(String podName, int gpus) {

    public WaitingPeer {
        if (gpus < 0) {
            throw new IllegalArgumentException("gpus: expected 0 or more, got " + gpus);
        }
    }
}
