package io.hetgpu.kubescheduler.dra;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * hetgpu's claim for a pod's GPUs, in the DRA allocator model's records: what the shipped claim template
 * {@code hetgpu-gpus-<count>-<level>} (manifests/components/dra-claim-templates) asks for, against which plain first fit is
 * measured. {@code HetgpuClaimTemplatesTest} holds the shipped templates to this.
 *
 * <p>It lives beside the allocator's records it is written in, so that both the test cluster's measurement
 * ({@code DraPlacement}) and the simulator's DRA policies place the same claims; this module depends on nothing but the
 * JDK and CEL, so the few names it reads from hetgpu's DRA contract ({@code io.hetgpu.gpu.inventory.HetgpuDra},
 * {@code NVLINK_SET_SIZES}) are repeated here and held equal to it by the test cluster's {@code HetgpuClaimsTest}.
 *
 * <ul>
 *   <li>1 GPU, high priority: {@code firstAvailable} with one subrequest per band of card tiers ({@link #BANDS}), the newest
 *       band first, selector on {@code device.attributes["gpu.hetgpu.io"].tier};</li>
 *   <li>1 GPU, low priority: the same bands, the oldest first;</li>
 *   <li>1 GPU, normal priority: {@code exactly}, any tier, first fit;</li>
 *   <li>2, 4 or 8 GPUs, high or low priority: the generations of {@link #NVLINK_BANDS} in the level's order, each
 *       twice, first bound by name to a {@code matchAttribute} on {@code gpu.hetgpu.io/nvlinkSet<N>} (named
 *       {@code <band>}{@value #LINKED_SUFFIX}, its GPUs in one NVLink-connected set of that size), then without it: the
 *       preferred generation first and, within it, a set where the node has one free;</li>
 *   <li>2, 4 or 8 GPUs, normal priority: {@value #NVLINK} (one set of any tier, bound to the constraint), then
 *       {@value #ANY} (any N of hetgpu's GPUs).</li>
 * </ul>
 *
 * DRA takes at most 8 alternatives ({@code FirstAvailableDeviceRequestMaxSize}) and the card table has more tiers, so
 * tiers are grouped by generation into 8 bands for one GPU and, since each band appears twice, 4 for several; both
 * cover every tier once. Interleaving keeps the generation the first choice: kube-scheduler 1.35+ scores a node by the
 * index of the alternative it serves, so an oldest-first claim whose every NVLink alternative came before every plain
 * one would rank a newer node's free set above an old PCIe-only node.
 */
public final class HetgpuClaims {

    /** hetgpu's DRA driver, also its attributes' domain ({@code DRIVER}). */
    public static final String DRIVER = "gpu.hetgpu.io";
    /** The card tier attribute, an int, higher = newer ({@code TIER}). */
    public static final String TIER = "tier";
    /** The sizes of the NVLink sets the driver publishes an attribute for ({@code NVLINK_SET_SIZES}). */
    public static final List<Integer> NVLINK_SET_SIZES = List.of(2, 4, 8);

    /** The attribute naming a GPU's NVLink set of {@code size} ({@code HetgpuDra.nvlinkSet}). */
    public static String nvlinkSet(int size) {
        return "nvlinkSet" + size;
    }

    /** hetgpu's DeviceClass: every GPU its driver publishes. */
    public static final String DEVICE_CLASS = DRIVER;
    public static final String CLASS_SELECTOR = "device.driver == \"" + DRIVER + "\"";
    /** The claim's one request. */
    public static final String REQUEST = "gpus";
    /** A claim of several GPUs, normal priority: one NVLink set of any tier. */
    public static final String NVLINK = "nvlink";
    /** A claim of several GPUs, normal priority, its last alternative: any GPUs, no NVLink set. */
    public static final String ANY = "any";
    /** How the name of a band's alternative bound to the NVLink constraint ends: {@code tier-84-up-nvlink}. */
    public static final String LINKED_SUFFIX = "-nvlink";
    /** The GPU counts a shipped template exists for. */
    public static final List<Integer> COUNTS = List.of(1, 2, 4, 8);

    /** A pod's priority level, as the extender's thresholds read it. */
    public enum Priority {
        HIGH, NORMAL, LOW;

        /** As a template's name ends. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * A band of card tiers, both ends included; {@code highest} empty for the newest band, {@code lowest} 0 for the oldest
     * (no lower bound in its selector).
     */
    public record Band(int lowest, Optional<Integer> highest) {

        /** The subrequest's name: {@code tier-84-99}, {@code tier-100-up}. */
        public String subRequest() {
            return "tier-" + lowest + highest.map(h -> "-" + h).orElse("-up");
        }

        public String selector() {
            var tier = "device.attributes[\"" + DRIVER + "\"]." + TIER;
            if (highest.isEmpty()) {
                return tier + " >= " + lowest;
            }
            if (lowest == 0) {
                return tier + " <= " + highest.get();
            }
            return tier + " >= " + lowest + " && " + tier + " <= " + highest.get();
        }

        public boolean holds(long tier) {
            return (lowest == 0 || tier >= lowest) && highest.map(h -> tier <= h).orElse(true);
        }
    }

    /** The bands, newest first: B200 and later; Hopper; A100; L40S to A40; A30 to A10; V100; P100 to T4; older. */
    public static final List<Band> BANDS = List.of(
            new Band(100, Optional.empty()),
            new Band(84, Optional.of(99)),
            new Band(70, Optional.of(83)),
            new Band(55, Optional.of(69)),
            new Band(45, Optional.of(54)),
            new Band(40, Optional.of(44)),
            new Band(25, Optional.of(39)),
            new Band(0, Optional.of(24)));

    /**
     * The bands of a claim of several GPUs, newest first, one per generation ({@code io.hetgpu.gpu.tier.CardGeneration},
     * by which the extender ranks such a pod's nodes before their NVLink sets; {@code HetgpuClaimsTest} holds them
     * equal): Hopper and later (84 up: H800, H100, H200,
     * GH200, B200); Ampere and Ada (45-83: A10, L4, A30, A40, L40, L40S, A100); Volta (40-44: V100, V100S); older (0-39:
     * K80, M60, M40, P4, P40, P100, and T4, an inference card that trains slower than a V100).
     */
    public static final List<Band> NVLINK_BANDS = List.of(
            new Band(84, Optional.empty()),
            new Band(45, Optional.of(83)),
            new Band(40, Optional.of(44)),
            new Band(0, Optional.of(39)));

    private HetgpuClaims() {
    }

    public static DeviceClass deviceClass() {
        return new DeviceClass(DEVICE_CLASS, List.of(CLASS_SELECTOR));
    }

    /** The shipped template a pod of {@code priority} names for {@code count} GPUs. */
    public static String templateName(int count, Priority priority) {
        return "hetgpu-gpus-" + count + "-" + priority.label();
    }

    /**
     * The fully qualified attribute every GPU of a claim for {@code count} must share: the smallest NVLink set size that
     * holds the count; none for one GPU or more than the largest set.
     */
    public static Optional<String> nvlinkAttribute(int count) {
        if (count < 2) {
            return Optional.empty();
        }
        return NVLINK_SET_SIZES.stream().filter(size -> size >= count).findFirst()
                .map(size -> DRIVER + "/" + nvlinkSet(size));
    }

    /** The bands a claim of one GPU lists, in its order: newest first for high priority, oldest first for low, none for normal. */
    public static List<Band> order(Priority priority) {
        return order(BANDS, priority);
    }

    private static List<Band> order(List<Band> bands, Priority priority) {
        return switch (priority) {
            case HIGH -> bands;
            case LOW -> bands.reversed();
            case NORMAL -> List.of();
        };
    }

    /** hetgpu's claim for {@code count} GPUs of a pod of {@code priority}. */
    public static Claim claim(String namespace, String name, Priority priority, int count) {
        if (count < 1) {
            throw new IllegalArgumentException("a claim asks for at least 1 GPU, got " + count);
        }
        var nvlink = nvlinkAttribute(count);
        if (nvlink.isPresent()) {
            return preferringNvlink(namespace, name, priority, count, nvlink.get());
        }
        var bands = order(priority);
        DeviceRequest request = bands.isEmpty()
                ? new DeviceRequest.Exactly(REQUEST, ExactRequest.count(DEVICE_CLASS, count))
                : new DeviceRequest.FirstAvailable(REQUEST, bands.stream().map(band -> band(band, count)).toList());
        return new Claim(namespace, name, List.of(request), List.of());
    }

    /**
     * Several GPUs. High or low: per band in the level's order, the band bound to the NVLink constraint, then the band
     * alone. Normal: {@value #NVLINK} bound to it, then {@value #ANY}.
     */
    private static Claim preferringNvlink(String namespace, String name, Priority priority, int count, String attribute) {
        var alternatives = new ArrayList<DeviceRequest.SubRequest>();
        var linked = new ArrayList<String>();
        var bands = order(NVLINK_BANDS, priority);
        if (bands.isEmpty()) {
            alternatives.add(new DeviceRequest.SubRequest(NVLINK, ExactRequest.count(DEVICE_CLASS, count)));
            linked.add(NVLINK);
            alternatives.add(new DeviceRequest.SubRequest(ANY, ExactRequest.count(DEVICE_CLASS, count)));
        } else {
            for (var band : bands) {
                var bound = band.subRequest() + LINKED_SUFFIX;
                alternatives.add(new DeviceRequest.SubRequest(bound, ExactRequest.count(DEVICE_CLASS, count, band.selector())));
                linked.add(bound);
                alternatives.add(band(band, count));
            }
        }
        var constraint = new MatchAttribute(linked.stream().map(sub -> REQUEST + "/" + sub).toList(), attribute);
        return new Claim(namespace, name, List.of(new DeviceRequest.FirstAvailable(REQUEST, alternatives)), List.of(constraint));
    }

    private static DeviceRequest.SubRequest band(Band band, int count) {
        return new DeviceRequest.SubRequest(band.subRequest(), ExactRequest.count(DEVICE_CLASS, count, band.selector()));
    }

    /** The plain claim hetgpu is measured against: {@code exactly: {deviceClassName, count}}, first fit. */
    public static Claim plain(String namespace, String name, int count) {
        return new Claim(namespace, name, List.of(new DeviceRequest.Exactly(REQUEST, ExactRequest.count(DEVICE_CLASS, count))));
    }
}
