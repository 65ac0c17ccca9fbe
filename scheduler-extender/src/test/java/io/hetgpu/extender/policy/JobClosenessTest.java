package io.hetgpu.extender.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.hetgpu.extender.model.NodeGpus;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PeerLocation;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.WaitingPeer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class JobClosenessTest {

    /** The rule as the scale states it: each peer by where it runs, each waiting pod on the node while the spare GPUs last. */
    private static double peerByPeer(NodeState node, int spareGpus, PlacementContext context) {
        double sum = 0;
        int counted = context.peers().size();
        for (var peer : context.peers()) {
            if (node.name().equals(peer.node())) {
                sum += Proximity.SAME_NODE;
            } else if (!node.rack().isEmpty() && node.rack().equals(peer.rack())) {
                sum += Proximity.SAME_RACK;
            } else if (!node.zone().isEmpty() && node.zone().equals(peer.zone())) {
                sum += Proximity.SAME_ZONE;
            }
        }
        int spare = spareGpus;
        for (var waiting : context.waiting()) {
            if (waiting.gpus() > 0) {
                counted++;
                if (waiting.gpus() <= spare) {
                    spare -= waiting.gpus();
                    sum += Proximity.SAME_NODE;
                }
            }
        }
        return counted == 0 ? 0 : sum / counted;
    }

    @Test
    void agreesWithThePeerByPeerRuleOnRandomJobsAndNodesWithAndWithoutRacksAndZones() {
        var random = new Random(7);
        var labels = List.of("", "a", "b", "c");
        for (int round = 0; round < 2_000; round++) {
            var peers = new ArrayList<PeerLocation>();
            for (int i = random.nextInt(6); i > 0; i--) {
                // A peer's rack and zone as its node carried them: not always the labels another node has now.
                peers.add(new PeerLocation("p" + i, "n" + random.nextInt(4), labels.get(random.nextInt(4)), labels.get(random.nextInt(4))));
            }
            var waiting = new ArrayList<WaitingPeer>();
            for (int i = random.nextInt(5); i > 0; i--) {
                waiting.add(new WaitingPeer("w" + i, random.nextInt(5)));
            }
            var context = new PlacementContext(peers, List.of(), waiting);
            var closeness = JobCloseness.of(context);
            for (int n = 0; n < 4; n++) {
                var node = new NodeState("n" + n, labels.get(random.nextInt(4)), labels.get(random.nextInt(4)), NodeGpus.NONE, 0);
                int spare = random.nextInt(10);
                assertThat(closeness.of(node, spare)).as("%s on %s with %d spare", context, node, spare)
                        .isCloseTo(peerByPeer(node, spare, context), within(1e-12));
                // A candidate on a node with GPUs, some of them free: its own copy of the place and the spare GPUs.
                int[] free = random.ints(0, 8).distinct().limit(random.nextInt(9)).toArray();
                var gpuNode = io.hetgpu.extender.TestNodes.placed(io.hetgpu.extender.TestNodes.gpu("n" + n,
                        io.hetgpu.extender.TestTopologies::dgxA100, free), node.rack(), node.zone());
                var candidate = Candidate.of(gpuNode, Candidate.NO_GPUS, 0, gpuNode.gpus().healthyMask());
                assertThat(closeness.of(candidate)).as("%s on a candidate on %s", context, gpuNode)
                        .isEqualTo(closeness.of(gpuNode, candidate.spareGpus(gpuNode)))
                        .isCloseTo(peerByPeer(gpuNode, free.length, context), within(1e-12));
            }
        }
    }

    @Test
    void aCandidateOnANodeWhoseNameHashesAlikeToAPeersNodeIsNotTakenForIt() {
        assertThat("Aa".hashCode()).isEqualTo("BB".hashCode());
        var closeness = JobCloseness.of(new PlacementContext(List.of(new PeerLocation("a", "Aa", "", "")), List.of()));
        var alike = new NodeState("BB", "", "", NodeGpus.NONE, 0);
        var own = new NodeState("Aa", "", "", NodeGpus.NONE, 0);

        assertThat(closeness.of(Candidate.of(alike, Candidate.NO_GPUS, 0, 0))).isZero();
        assertThat(closeness.of(Candidate.of(own, Candidate.NO_GPUS, 0, 0))).isEqualTo(Proximity.SAME_NODE);
    }

    @Test
    void nodesWithTheSameNeighboursGetTheVerySameValueWhateverTheOrderOfThePeers() {
        var onIt = new PeerLocation("a", "n1", "r1", "z1");
        var inRack = new PeerLocation("b", "n2", "r1", "z1");
        var inZone = new PeerLocation("c", "n3", "r2", "z1");
        var node = new NodeState("n1", "r1", "z1", NodeGpus.NONE, 0);

        double forward = JobCloseness.of(new PlacementContext(List.of(onIt, inRack, inZone), List.of())).of(node, 0);
        double backward = JobCloseness.of(new PlacementContext(List.of(inZone, inRack, onIt), List.of())).of(node, 0);

        assertThat(forward).isEqualTo(backward).isCloseTo((1.0 + 0.6 + 0.3) / 3, within(1e-12));
    }
}
