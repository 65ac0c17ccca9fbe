package io.hetgpu.kubescheduler.dra;

import java.util.List;
import java.util.Optional;

/**
 * A DeviceClass as the allocator reads it.
 *
 * @param selectors            CEL expressions every device of the class satisfies
 * @param extendedResourceName {@code spec.extendedResourceName}: the extended resource (a plain {@code nvidia.com/gpu}
 *                             request) this class serves on nodes where no device plugin advertises it
 */
public record DeviceClass(String name, List<String> selectors, Optional<String> extendedResourceName) {

    /** The name every class serves implicitly, whether or not it names one of its own. */
    public static final String IMPLICIT_EXTENDED_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/";

    public DeviceClass {
        selectors = List.copyOf(selectors);
    }

    public DeviceClass(String name, List<String> selectors) {
        this(name, selectors, Optional.empty());
    }

    /** Whether a container's request for this extended resource is served by this class. */
    public boolean serves(String resourceName) {
        return extendedResourceName.filter(resourceName::equals).isPresent()
                || resourceName.equals(IMPLICIT_EXTENDED_RESOURCE_PREFIX + name);
    }
}
