package io.hetgpu.testcluster.manifests;

import io.fabric8.kubernetes.api.model.HasMetadata;

import java.util.List;

/** The objects an install renders, for tests outside this package (the shipped jars' tests run what they configure). */
public final class RenderedManifests {

    private RenderedManifests() {
    }

    /**
     * {@code kubectl kustomize manifests/overlays/simulated}: the whole install, with one device plugin
     * DaemonSet per simulated machine instead of the NVML one (there is no GPU where the tests run).
     */
    public static List<HasMetadata> simulatedInstall() {
        return Kubectl.kustomize(ManifestTree.SIMULATED_OVERLAY).objects();
    }

    /** {@code kubectl kustomize manifests}: the install a cluster with GPUs gets, its device plugin reading NVML. */
    public static List<HasMetadata> install() {
        return Kubectl.kustomize(ManifestTree.ROOT).objects();
    }

    /** {@code kubectl kustomize manifests/overlays/dra}: the install with the node agent as hetgpu's DRA driver (NVML). */
    public static List<HasMetadata> draInstall() {
        return Kubectl.kustomize(ManifestTree.DRA_OVERLAY).objects();
    }
}
