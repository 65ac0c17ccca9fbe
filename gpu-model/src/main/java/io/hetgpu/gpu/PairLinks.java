package io.hetgpu.gpu;

import java.util.List;
import java.util.stream.IntStream;

/**
 * How a set of GPUs is joined, pair by pair: how many pairs, how many of them over NVLink and with how many
 * links, whether through an NVSwitch fabric, and the worst PCIe path among the others. What an admin or a
 * pod author reads about a node or a GPU set; the allocator ranks sets by {@link GpuLink#score()} instead.
 *
 * @param pairs        GPU pairs in the set
 * @param nvlinkPairs  pairs joined by NVLink
 * @param fewestLinks  fewest NVLinks of an NVLink pair (0 when there is none)
 * @param mostLinks    most NVLinks of an NVLink pair (0 when there is none)
 * @param viaNvswitch  some NVLink pair goes through an NVSwitch fabric
 * @param worstPcie    the worst-scoring link of the pairs not on NVLink, or null when every pair is
 */
public record PairLinks(int pairs, int nvlinkPairs, int fewestLinks, int mostLinks, boolean viaNvswitch, GpuLink worstPcie) {

    /** The pairs among {@code positions} in {@code matrix}. */
    public static PairLinks among(LinkMatrix matrix, List<Integer> positions) {
        int pairs = 0;
        int nvlinkPairs = 0;
        int fewest = Integer.MAX_VALUE;
        int most = 0;
        boolean nvswitch = false;
        GpuLink worst = null;
        for (int i = 0; i < positions.size(); i++) {
            for (int j = i + 1; j < positions.size(); j++) {
                var link = matrix.link(positions.get(i), positions.get(j));
                pairs++;
                if (link instanceof GpuLink.Nvlink nvlink) {
                    nvlinkPairs++;
                    fewest = Math.min(fewest, nvlink.links());
                    most = Math.max(most, nvlink.links());
                    nvswitch |= nvlink.viaNvswitch();
                } else if (worst == null || link.score() < worst.score()) {
                    worst = link;
                }
            }
        }
        return new PairLinks(pairs, nvlinkPairs, nvlinkPairs == 0 ? 0 : fewest, most, nvswitch, worst);
    }

    /** Every pair of the node's GPUs. */
    public static PairLinks among(NodeTopology topology) {
        return among(topology.links(), IntStream.range(0, topology.size()).boxed().toList());
    }

    /** "12", or "1-2" when NVLink pairs have different counts. */
    public String linkCount() {
        return fewestLinks == mostLinks ? String.valueOf(mostLinks) : fewestLinks + "-" + mostLinks;
    }
}
