package io.hetgpu.extender.model;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;

/**
 * The DRA objects a pod's GPU request is read from: its ResourceClaims and the DeviceClasses they name. Backed by the
 * cluster view's informers where the cluster serves {@code resource.k8s.io/v1}, else by {@link #NONE}.
 */
public interface DraLookup {

    /** The claim of that namespace and name, or null when none is known. */
    ResourceClaim claim(String namespace, String name);

    /** The DeviceClass of that name, or null. */
    DeviceClass deviceClass(String name);

    /** The DeviceClass whose {@code spec.extendedResourceName} is this resource (a plain {@code nvidia.com/gpu} served by DRA), or null. */
    DeviceClass extendedResourceClass(String resourceName);

    /** A cluster without DRA: no claims, no classes. */
    DraLookup NONE = new DraLookup() {
        @Override
        public ResourceClaim claim(String namespace, String name) {
            return null;
        }

        @Override
        public DeviceClass deviceClass(String name) {
            return null;
        }

        @Override
        public DeviceClass extendedResourceClass(String resourceName) {
            return null;
        }
    };
}
