package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.job.ArrivalOrder;
import io.hetgpu.extender.model.DataLocality;
import io.hetgpu.extender.model.InvalidPodRequestException;
import io.hetgpu.extender.model.PeerLocation;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.model.WaitingPeer;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a pod's job peers run and where its volumes' data lives, read from the cluster's objects however a view holds
 * them (informer stores, or one listing): one rule for every view.
 */
final class PlacementContexts {

    private static final Logger LOG = LoggerFactory.getLogger(PlacementContexts.class);

    /**
     * The objects a context is read from, as the view holds them.
     *
     * @param jobPods every pod of the job of a key ({@code JobMembership.key()})
     * @param node    a node by name, or null
     * @param claim   a claim by namespace and name, or null
     * @param volume  a PersistentVolume by name, or null
     */
    record Objects(Function<String, List<Pod>> jobPods, Function<String, Node> node,
                   BiFunction<String, String, PersistentVolumeClaim> claim, Function<String, PersistentVolume> volume) {
    }

    private PlacementContexts() {
    }

    static PlacementContext of(PodRequest pod, Objects objects, PodRequestParser parser, String rackLabel) {
        var peers = new ArrayList<PeerLocation>();
        var waiting = new ArrayList<WaitingPeer>();
        if (!pod.job().isEmpty()) {
            var job = objects.jobPods().apply(pod.namespace() + "/" + pod.job()).stream()
                    .filter(peer -> !peer.getMetadata().getName().equals(pod.name()))
                    .sorted(ArrivalOrder.PODS).toList();
            for (var peer : job) {
                var nodeName = peer.getSpec() == null ? null : peer.getSpec().getNodeName();
                if ((nodeName == null || nodeName.isEmpty()) && BoundPods.waitsForNode(peer)) {
                    waiting.add(new WaitingPeer(peer.getMetadata().getName(), gpuCount(peer, parser)));
                    continue;
                }
                if (!BoundPods.holdsResources(peer)) {
                    continue;
                }
                var node = objects.node().apply(nodeName);
                var labels = node == null || node.getMetadata().getLabels() == null ? Map.<String, String>of() : node.getMetadata().getLabels();
                peers.add(new PeerLocation(peer.getMetadata().getName(), nodeName, labels.getOrDefault(rackLabel, ""),
                        labels.getOrDefault(HetgpuKeys.LABEL_ZONE, "")));
            }
        }
        return new PlacementContext(peers, volumes(pod, objects, rackLabel), waiting);
    }

    /** Where the data of the pod's volumes lives: its claims' volumes' localities, those that have one. */
    static List<DataLocality> volumes(PodRequest pod, Objects objects, String rackLabel) {
        var located = new ArrayList<DataLocality>();
        for (var claimName : pod.claimNames()) {
            var claim = objects.claim().apply(pod.namespace(), claimName);
            var volumeName = claim == null || claim.getSpec() == null ? null : claim.getSpec().getVolumeName();
            var volume = volumeName == null || volumeName.isEmpty() ? null : objects.volume().apply(volumeName);
            try {
                var locality = VolumeLocality.of(claim, volume, rackLabel);
                if (!locality.isEmpty()) {
                    located.add(locality);
                }
            } catch (IllegalArgumentException e) {
                // An admin's annotation, not the pod's: placing the pod without data locality beats refusing it.
                LOG.warn("ignoring the data locality of claim {}/{}: {}", Quote.escaped(pod.namespace()), Quote.escaped(claimName),
                        Quote.escaped(e.getMessage()));
            }
        }
        return located;
    }

    /** GPUs a pod asks for; 0 when its request cannot be read (it will be refused on its own turn, saying why). */
    private static int gpuCount(Pod pod, PodRequestParser parser) {
        try {
            return parser.gpuCount(pod);
        } catch (InvalidPodRequestException e) {
            return 0;
        }
    }
}
