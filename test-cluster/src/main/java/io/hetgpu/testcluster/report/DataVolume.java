package io.hetgpu.testcluster.report;

/**
 * Where a job's training data lives, for the picture.
 *
 * @param claim       the claim pods mount
 * @param rack        the rack whose storage holds it
 * @param description what it is, in a few words ("ImageNet, 2 TiB over NFS")
 */
public record DataVolume(String claim, String rack, String description) {
}
