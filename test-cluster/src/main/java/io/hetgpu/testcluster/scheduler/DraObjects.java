package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.hetgpu.kubescheduler.dra.AllocationMode;
import io.hetgpu.kubescheduler.dra.Claim;
import io.hetgpu.kubescheduler.dra.Device;
import io.hetgpu.kubescheduler.dra.DeviceAttribute;
import io.hetgpu.kubescheduler.dra.DeviceClass;
import io.hetgpu.kubescheduler.dra.DeviceId;
import io.hetgpu.kubescheduler.dra.DeviceRequest;
import io.hetgpu.kubescheduler.dra.ExactRequest;
import io.hetgpu.kubescheduler.dra.MatchAttribute;
import io.hetgpu.kubescheduler.dra.Quantity;
import io.hetgpu.kubescheduler.dra.ResourceSlice;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The API server's {@code resource.k8s.io/v1} objects as the DRA allocator model reads them. A claim is a pod author's:
 * a field the model cannot read is a reason naming it and its value, never an exception.
 */
public final class DraObjects {

    private DraObjects() {
    }

    /** A claim as the allocator reads it, or why it cannot be. */
    public sealed interface ClaimReading {
        record Read(Claim claim) implements ClaimReading {
        }

        record Unreadable(String reason) implements ClaimReading {
        }
    }

    public static ResourceSlice slice(io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice slice) {
        var spec = slice.getSpec();
        var pool = spec.getPool();
        var devices = Objects.requireNonNullElse(spec.getDevices(), List.<io.fabric8.kubernetes.api.model.resource.v1.Device>of()).stream()
                .map(DraObjects::device).toList();
        return new ResourceSlice(slice.getMetadata().getName(), text(spec.getDriver()), pool == null ? "" : text(pool.getName()),
                pool == null || pool.getGeneration() == null ? 0 : pool.getGeneration(),
                pool == null || pool.getResourceSliceCount() == null ? 1 : pool.getResourceSliceCount(),
                text(spec.getNodeName()), Boolean.TRUE.equals(spec.getAllNodes()), devices);
    }

    private static Device device(io.fabric8.kubernetes.api.model.resource.v1.Device device) {
        var attributes = new LinkedHashMap<String, DeviceAttribute>();
        Objects.requireNonNullElse(device.getAttributes(), Map.<String, io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute>of())
                .forEach((name, value) -> attribute(value).ifPresent(a -> attributes.put(name, a)));
        var capacity = new LinkedHashMap<String, Quantity>();
        Objects.requireNonNullElse(device.getCapacity(), Map.<String, io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity>of())
                .forEach((name, value) -> {
                    if (value != null && value.getValue() != null) {
                        capacity.put(name, new Quantity(value.getValue().getNumericalAmount()));
                    }
                });
        return new Device(text(device.getName()), attributes, capacity);
    }

    private static Optional<DeviceAttribute> attribute(io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute value) {
        if (value == null) {
            return Optional.empty();
        }
        if (value.getString() != null) {
            return Optional.of(new DeviceAttribute.StringValue(value.getString()));
        }
        if (value.getInt() != null) {
            return Optional.of(new DeviceAttribute.IntValue(value.getInt()));
        }
        if (value.getBool() != null) {
            return Optional.of(new DeviceAttribute.BoolValue(value.getBool()));
        }
        if (value.getVersion() != null) {
            return Optional.of(new DeviceAttribute.VersionValue(value.getVersion()));
        }
        // List values are newer than the model: such an attribute is left out, as if the driver had not published it.
        return Optional.empty();
    }

    public static DeviceClass deviceClass(io.fabric8.kubernetes.api.model.resource.v1.DeviceClass deviceClass) {
        var spec = deviceClass.getSpec();
        var selectors = spec == null ? List.<String>of() : expressions(spec.getSelectors());
        return new DeviceClass(deviceClass.getMetadata().getName(), selectors,
                spec == null ? Optional.empty() : Optional.ofNullable(spec.getExtendedResourceName()));
    }

    /** DeviceClasses by name, oldest first (the latest naming an extended resource serves it). */
    public static Map<String, DeviceClass> classes(List<io.fabric8.kubernetes.api.model.resource.v1.DeviceClass> classes) {
        var sorted = new ArrayList<>(classes);
        sorted.sort(java.util.Comparator.comparing((io.fabric8.kubernetes.api.model.resource.v1.DeviceClass c) ->
                text(c.getMetadata().getCreationTimestamp())).thenComparing(c -> c.getMetadata().getName()));
        var byName = new LinkedHashMap<String, DeviceClass>();
        for (var c : sorted) {
            byName.put(c.getMetadata().getName(), deviceClass(c));
        }
        return byName;
    }

    public static ClaimReading claim(ResourceClaim claim) {
        var name = claim.getMetadata().getNamespace() + "/" + claim.getMetadata().getName();
        var devices = claim.getSpec() == null ? null : claim.getSpec().getDevices();
        if (devices == null) {
            return new ClaimReading.Read(new Claim(claim.getMetadata().getNamespace(), claim.getMetadata().getName(), List.of()));
        }
        var requests = new ArrayList<DeviceRequest>();
        for (var request : Objects.requireNonNullElse(devices.getRequests(), List.<io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest>of())) {
            var where = "claim " + name + ", request " + quote(request.getName());
            if (request.getExactly() != null) {
                var exact = request.getExactly();
                var read = exact(where, exact.getDeviceClassName(), exact.getSelectors(), exact.getAllocationMode(), exact.getCount());
                if (read instanceof Unread unread) {
                    return new ClaimReading.Unreadable(unread.reason());
                }
                requests.add(new DeviceRequest.Exactly(text(request.getName()), ((ReadRequest) read).request()));
            } else if (request.getFirstAvailable() != null && !request.getFirstAvailable().isEmpty()) {
                var subs = new ArrayList<DeviceRequest.SubRequest>();
                for (var sub : request.getFirstAvailable()) {
                    var read = exact(where + "/" + quote(sub.getName()), sub.getDeviceClassName(), sub.getSelectors(), sub.getAllocationMode(),
                            sub.getCount());
                    if (read instanceof Unread unread) {
                        return new ClaimReading.Unreadable(unread.reason());
                    }
                    subs.add(new DeviceRequest.SubRequest(text(sub.getName()), ((ReadRequest) read).request()));
                }
                requests.add(new DeviceRequest.FirstAvailable(text(request.getName()), subs));
            } else {
                return new ClaimReading.Unreadable(where + ": neither exactly nor firstAvailable is set");
            }
        }
        var constraints = new ArrayList<MatchAttribute>();
        for (var constraint : Objects.requireNonNullElse(devices.getConstraints(),
                List.<io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint>of())) {
            if (constraint.getMatchAttribute() == null) {
                return new ClaimReading.Unreadable("claim " + name + ": a constraint without matchAttribute (distinctAttribute is not modelled)");
            }
            constraints.add(new MatchAttribute(Objects.requireNonNullElse(constraint.getRequests(), List.of()), constraint.getMatchAttribute()));
        }
        return new ClaimReading.Read(new Claim(claim.getMetadata().getNamespace(), claim.getMetadata().getName(), requests, constraints));
    }

    private sealed interface RequestReading {
    }

    private record ReadRequest(ExactRequest request) implements RequestReading {
    }

    private record Unread(String reason) implements RequestReading {
    }

    private static RequestReading exact(String where, String className, List<DeviceSelector> selectors, String mode, Long count) {
        var allocationMode = mode == null || mode.isEmpty() || mode.equals("ExactCount") ? AllocationMode.EXACT_COUNT
                : mode.equals("All") ? AllocationMode.ALL : null;
        if (allocationMode == null) {
            return new Unread(where + ": unsupported allocationMode " + quote(mode));
        }
        // The API server defaults count to 1 in ExactCount mode.
        long devices = allocationMode == AllocationMode.EXACT_COUNT ? Objects.requireNonNullElse(count, 1L) : 0;
        return new ReadRequest(new ExactRequest(text(className), expressions(selectors), allocationMode, devices));
    }

    private static List<String> expressions(List<DeviceSelector> selectors) {
        if (selectors == null) {
            return List.of();
        }
        // A selector without CEL is some future kind: the allocator refuses an empty expression with a reason.
        return selectors.stream().map(s -> s == null || s.getCel() == null ? "" : text(s.getCel().getExpression())).toList();
    }

    /** Every device some claim's {@code status.allocation} holds. */
    public static List<DeviceId> allocatedDevices(ResourceClaim claim) {
        var status = claim.getStatus();
        if (status == null || status.getAllocation() == null || status.getAllocation().getDevices() == null
                || status.getAllocation().getDevices().getResults() == null) {
            return List.of();
        }
        return status.getAllocation().getDevices().getResults().stream()
                .map(r -> new DeviceId(text(r.getDriver()), text(r.getPool()), text(r.getDevice()))).toList();
    }

    /** The node an allocated claim is tied to by its {@code nodeSelector} ({@code metadata.name In [node]}), if any. */
    public static Optional<String> allocatedNode(ResourceClaim claim) {
        var status = claim.getStatus();
        if (status == null || status.getAllocation() == null || status.getAllocation().getNodeSelector() == null) {
            return Optional.empty();
        }
        var fields = new HashMap<String, String>();
        for (var term : Objects.requireNonNullElse(status.getAllocation().getNodeSelector().getNodeSelectorTerms(),
                List.<io.fabric8.kubernetes.api.model.NodeSelectorTerm>of())) {
            for (var field : Objects.requireNonNullElse(term.getMatchFields(), List.<io.fabric8.kubernetes.api.model.NodeSelectorRequirement>of())) {
                if ("metadata.name".equals(field.getKey()) && field.getValues() != null && field.getValues().size() == 1) {
                    fields.put(field.getKey(), field.getValues().get(0));
                }
            }
        }
        return Optional.ofNullable(fields.get("metadata.name"));
    }

    static String quote(String value) {
        return io.hetgpu.gpu.Quote.of(value);
    }

    private static String text(String value) {
        return Objects.requireNonNullElse(value, "");
    }
}
