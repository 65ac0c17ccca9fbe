/**
 * Machine profiles: GPU machines described in a small YAML/JSON format (documented in
 * {@code io/hetgpu/gpu/profiles/README.md} next to the shipped profiles), read by {@link
 * io.hetgpu.gpu.profile.ProfileLoader} into a {@link io.hetgpu.gpu.profile.MachineProfile}, which gives
 * the {@link io.hetgpu.gpu.NodeTopology} of any number of simulated nodes; {@link
 * io.hetgpu.gpu.profile.SimulatedGpuSource} serves one such node as a {@link
 * io.hetgpu.gpu.discovery.GpuSource} whose device health tests can change.
 */
package io.hetgpu.gpu.profile;
