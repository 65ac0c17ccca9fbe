package io.hetgpu.extender.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * The benchmark's training pod, and a job of {@value #SIZE} such pods (4 NVLink GPUs each, V100 or newer) that the
 * extender's pod cache holds, all waiting: the filter of any of them, with no plan held, plans all {@value #SIZE}.
 */
final class BenchJob {

    static final int SIZE = 16;
    private static final String JOB = "llama";

    /** A Kubeflow PyTorchJob worker asking for 4 NVLink-connected V100, A100 or H100 GPUs. */
    static final String TRAINING = KubeJson.text("pod-pytorch-worker.json")
            .replace("\"hetgpu.io/gpu-models\": \"V100,A100\",", "\"hetgpu.io/gpu-models\": \"V100,A100,H100\",")
            .replace("\"hetgpu.io/min-gpu-memory\": \"15Gi\",", "");

    private static final List<Pod> MEMBERS = IntStream.range(0, SIZE).mapToObj(BenchJob::memberPod).toList();

    private BenchJob() {
    }

    /** Member {@code index} as kube-scheduler sends it: the training pod, named and labelled as a pod of the job. */
    static String member(int index) {
        try {
            var pod = (ObjectNode) KubeJson.MAPPER.readTree(TRAINING);
            var metadata = (ObjectNode) pod.get("metadata");
            metadata.put("name", JOB + "-worker-" + index);
            metadata.put("uid", "00000000-0000-0000-0000-" + String.format("%012d", index));
            ((ObjectNode) metadata.get("labels")).put(HetgpuKeys.POD_JOB, JOB);
            ((ObjectNode) metadata.get("annotations")).put(HetgpuKeys.POD_JOB_SIZE, Integer.toString(SIZE));
            return KubeJson.MAPPER.writeValueAsString(pod);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Pod memberPod(int index) {
        try {
            return KubeJson.MAPPER.readValue(member(index), Pod.class);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code nodes}' view with the job's pods in its pod cache, as an informer would hold them. */
    static ClusterView view(ClusterView nodes) {
        return new ClusterView() {
            @Override
            public boolean synced() {
                return nodes.synced();
            }

            @Override
            public boolean knowsNodes() {
                return nodes.knowsNodes();
            }

            @Override
            public NodeSnapshot nodes() {
                return nodes.nodes();
            }

            @Override
            public PlacementContext contextOf(PodRequest pod) {
                return nodes.contextOf(pod);
            }

            @Override
            public List<Pod> jobPods(String jobKey) {
                return MEMBERS.stream().filter(pod -> jobKey.equals(keyOf(pod))).toList();
            }

            @Override
            public Set<String> jobKeys() {
                return Set.of(keyOf(MEMBERS.getFirst()));
            }

            @Override
            public Pod podByUid(String uid) {
                return MEMBERS.stream().filter(pod -> uid.equals(pod.getMetadata().getUid())).findFirst().orElse(null);
            }
        };
    }

    private static String keyOf(Pod pod) {
        return JobMembershipReader.keyOf(pod).orElseThrow();
    }
}
