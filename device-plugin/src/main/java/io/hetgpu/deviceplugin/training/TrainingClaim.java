package io.hetgpu.deviceplugin.training;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hetgpu.gpu.inventory.HetgpuDra;

/**
 * The ResourceClaim the DRA driver's training run prepares: as kube-scheduler leaves one made from hetgpu's claim
 * template for two GPUs (hetgpu-gpus-2-high, its first two bands), allocated on the node's first two GPUs through the
 * NVLink band. The driver reads all of it from the API server, so its fields are those of a claim in a cluster: each
 * field's model class is in the cache then, as the first pod with GPUs on a node would load it.
 *
 * @param namespace the claim's namespace
 * @param name      its name
 * @param uid       its UID, which kubelet names too
 * @param json      the claim as the API server holds it
 */
record TrainingClaim(String namespace, String name, String uid, ObjectNode json) {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The claim allocated on {@code node}'s {@code gpu-0} and {@code gpu-1}. */
    static TrainingClaim of(String node) {
        var namespace = "aot-training";
        var name = "training-gpus";
        var uid = "aot-training-claim";
        // A JSON string: the CEL expression's quotes escaped.
        var band = "device.attributes[\\\"" + HetgpuDra.DRIVER + "\\\"].tier >= 84";
        var text = """
                {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": "%2$s", "namespace": "%1$s", "uid": "%3$s", "resourceVersion": "7",
                   "annotations": {"resource.kubernetes.io/pod-claim-name": "gpus"},
                   "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "training", "uid": "aot-training-pod",
                     "controller": true, "blockOwnerDeletion": true}]},
                 "spec": {"devices": {
                   "requests": [{"name": "gpus", "firstAvailable": [
                     {"name": "tier-84-up-nvlink", "deviceClassName": "%4$s",
                      "selectors": [{"cel": {"expression": "%6$s"}}], "allocationMode": "ExactCount", "count": 2},
                     {"name": "tier-84-up", "deviceClassName": "%4$s",
                      "selectors": [{"cel": {"expression": "%6$s"}}], "allocationMode": "ExactCount", "count": 2}]}],
                   "constraints": [{"requests": ["gpus/tier-84-up-nvlink"], "matchAttribute": "%4$s/nvlinkSet2"}]}},
                 "status": {
                   "allocation": {
                     "devices": {"results": [
                       {"request": "gpus/tier-84-up-nvlink", "driver": "%4$s", "pool": "%5$s", "device": "%7$s"},
                       {"request": "gpus/tier-84-up-nvlink", "driver": "%4$s", "pool": "%5$s", "device": "%8$s"}]},
                     "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                       {"key": "metadata.name", "operator": "In", "values": ["%5$s"]}]}]}},
                   "reservedFor": [{"resource": "pods", "name": "training", "uid": "aot-training-pod"}]}}
                """.formatted(namespace, name, uid, HetgpuDra.DRIVER, HetgpuDra.pool(node), band,
                HetgpuDra.deviceName(0), HetgpuDra.deviceName(1));
        try {
            return new TrainingClaim(namespace, name, uid, (ObjectNode) JSON.readTree(text));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("the training claim is not JSON: " + e.getOriginalMessage(), e);
        }
    }
}
