package io.hetgpu.gpu.tier;

import io.hetgpu.gpu.ComputeCapability;

/**
 * One entry of the card catalog.
 *
 * @param model             normalised model name
 * @param rank              tier rank, higher is newer and faster
 * @param computeCapability the model's compute capability, used to place unknown models
 * @param maxMemoryMiB      the largest memory size the model ships with, used to place unknown models
 */
public record KnownCard(String model, int rank, ComputeCapability computeCapability, long maxMemoryMiB) {
}
