package io.hetgpu.gpu.tier;

/**
 * The rank of a card model: higher is newer and faster for training.
 *
 * @param model     the normalised card model
 * @param rank      the tier; comparable across every model the catalog knows
 * @param estimated true when the model is not in the catalog and the rank was derived (see {@link CardCatalog})
 * @param basis     one sentence on where the rank came from, for labels, events and logs
 */
public record CardTier(String model, int rank, boolean estimated, String basis) implements Comparable<CardTier> {

    @Override
    public int compareTo(CardTier other) {
        return Integer.compare(rank, other.rank);
    }
}
