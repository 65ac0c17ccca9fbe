package io.hetgpu.gpu.tier;

import io.hetgpu.gpu.CardModel;
import io.hetgpu.gpu.ComputeCapability;
import io.hetgpu.gpu.GpuDevice;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a pod asks of each of its cards ({@code hetgpu.io/gpu-models}, {@code hetgpu.io/min-gpu-memory},
 * {@code hetgpu.io/min-compute-capability}): read the same way by the extender, which filters nodes and chooses devices
 * by it, and by the device plugin, which honours it for a pod that has no recorded devices.
 *
 * @param models               the card models allowed (as {@link CardModel#fromProductName} spells them); empty = any
 * @param minMemoryMiB         least memory per card; 0 = any
 * @param minComputeCapability least compute capability; {@link #ANY_COMPUTE_CAPABILITY} = any
 */
public record CardRequirements(Set<String> models, long minMemoryMiB, ComputeCapability minComputeCapability) {

    public static final ComputeCapability ANY_COMPUTE_CAPABILITY = new ComputeCapability(1, 0);
    public static final CardRequirements ANY = new CardRequirements(Set.of(), 0, ANY_COMPUTE_CAPABILITY);

    private static final BigDecimal MIB = BigDecimal.valueOf(1024L * 1024);
    /** A Kubernetes quantity with a unit (a bare number is bytes to Kubernetes, which nobody means for GPU memory). */
    private static final Pattern MEMORY = Pattern.compile("([0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)");
    private static final Map<String, BigDecimal> UNITS = Map.ofEntries(
            Map.entry("Ki", BigDecimal.valueOf(1L << 10)), Map.entry("Mi", BigDecimal.valueOf(1L << 20)),
            Map.entry("Gi", BigDecimal.valueOf(1L << 30)), Map.entry("Ti", BigDecimal.valueOf(1L << 40)),
            Map.entry("Pi", BigDecimal.valueOf(1L << 50)), Map.entry("Ei", BigDecimal.valueOf(1L << 60)),
            Map.entry("k", BigDecimal.TEN.pow(3)), Map.entry("M", BigDecimal.TEN.pow(6)), Map.entry("G", BigDecimal.TEN.pow(9)),
            Map.entry("T", BigDecimal.TEN.pow(12)), Map.entry("P", BigDecimal.TEN.pow(15)), Map.entry("E", BigDecimal.TEN.pow(18)));

    public CardRequirements {
        models = Collections.unmodifiableSet(new LinkedHashSet<>(models));
    }

    /**
     * The requirements in a pod's annotations. Each problem (naming the annotation and quoting the value) is added to
     * {@code problems} and that requirement read as "any"; a model the catalog does not know is a problem too.
     */
    public static CardRequirements read(Map<String, String> annotations, CardCatalog catalog, List<String> problems) {
        return new CardRequirements(models(annotations.get(HetgpuKeys.POD_GPU_MODELS), catalog, problems),
                minMemory(annotations.get(HetgpuKeys.POD_MIN_GPU_MEMORY), problems),
                minComputeCapability(annotations.get(HetgpuKeys.POD_MIN_COMPUTE_CAPABILITY), problems));
    }

    /** Whether any requirement is set. */
    public boolean isAny() {
        return models.isEmpty() && minMemoryMiB == 0 && minComputeCapability.equals(ANY_COMPUTE_CAPABILITY);
    }

    /** Whether the card meets every requirement. */
    public boolean admits(GpuDevice device) {
        return (models.isEmpty() || models.contains(device.model())) && device.memoryMiB() >= minMemoryMiB
                && device.computeCapability().isAtLeast(minComputeCapability);
    }

    private static Set<String> models(String text, CardCatalog catalog, List<String> problems) {
        if (text == null) {
            return Set.of();
        }
        var models = new LinkedHashSet<String>();
        for (var part : text.split(",")) {
            if (part.isBlank()) {
                continue;
            }
            var model = CardModel.fromProductName(part);
            if (!catalog.knows(model)) {
                problems.add(HetgpuKeys.POD_GPU_MODELS + ": unknown card model " + Quote.of(part.strip()) + " in " + Quote.of(text)
                        + " (known: " + String.join(", ", catalog.cards().stream().map(c -> c.model()).toList())
                        + "; an admin can add a model to the tier table)");
            }
            models.add(model);
        }
        if (models.isEmpty()) {
            problems.add(HetgpuKeys.POD_GPU_MODELS + ": expected card models such as \"A100,H100\", got " + Quote.of(text));
        }
        return models;
    }

    private static long minMemory(String text, List<String> problems) {
        if (text == null) {
            return 0;
        }
        var matcher = MEMORY.matcher(text.strip());
        var bytes = matcher.matches() ? new BigDecimal(matcher.group(1)).multiply(UNITS.get(matcher.group(2))) : BigDecimal.ZERO;
        if (bytes.signum() <= 0) {
            problems.add(HetgpuKeys.POD_MIN_GPU_MEMORY + ": expected a memory size such as \"32Gi\" or \"16000Mi\", got " + Quote.of(text));
            return 0;
        }
        return bytes.divide(MIB, 0, RoundingMode.CEILING).longValueExact();
    }

    private static ComputeCapability minComputeCapability(String text, List<String> problems) {
        if (text == null) {
            return ANY_COMPUTE_CAPABILITY;
        }
        try {
            return ComputeCapability.parse(text);
        } catch (IllegalArgumentException e) {
            problems.add(HetgpuKeys.POD_MIN_COMPUTE_CAPABILITY + ": expected MAJOR.MINOR such as \"7.0\", got " + Quote.of(text));
            return ANY_COMPUTE_CAPABILITY;
        }
    }
}
