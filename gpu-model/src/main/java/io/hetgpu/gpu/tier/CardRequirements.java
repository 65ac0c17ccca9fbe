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
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a pod asks of each of its cards ({@code hetgpu.io/gpu-models}, {@code hetgpu.io/gpu-min-model},
 * {@code hetgpu.io/gpu-exclude-models}, {@code hetgpu.io/min-gpu-memory}, {@code hetgpu.io/min-compute-capability}): read
 * the same way by the extender, which filters nodes and chooses devices by it, and by the device plugin, which honours
 * it for a pod that has no recorded devices.
 *
 * <p>"A100 or newer" is a tier, not a compute capability: 8.0 also admits the A30, and 8.6 and 8.9 the A10, A40, L4
 * and L40S, all ranked below the A100 for training. So {@code gpu-min-model} admits the named card and every card the
 * tier table ranks at or above it, a card missing from the table by the rank the table estimates for it.
 *
 * @param models               the card models allowed (as {@link CardModel#fromProductName} spells them); empty = any
 * @param minTier              the weakest card allowed, by tier rank; {@link #ANY_TIER} = any
 * @param excludedModels       card models refused whatever else admits them
 * @param minMemoryMiB         least memory per card; 0 = any
 * @param minComputeCapability least compute capability; {@link #ANY_COMPUTE_CAPABILITY} = any
 */
public record CardRequirements(Set<String> models, CardTier minTier, Set<String> excludedModels, long minMemoryMiB,
                               ComputeCapability minComputeCapability) {

    public static final ComputeCapability ANY_COMPUTE_CAPABILITY = new ComputeCapability(1, 0);
    /** Below every rank the tier table gives or estimates (the lowest estimate is 1). */
    public static final CardTier ANY_TIER = new CardTier("", 0, false, "any card");
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
        Objects.requireNonNull(minTier, "minTier");
        excludedModels = Collections.unmodifiableSet(new LinkedHashSet<>(excludedModels));
        Objects.requireNonNull(minComputeCapability, "minComputeCapability");
    }

    /** Models, memory and compute capability only. */
    public CardRequirements(Set<String> models, long minMemoryMiB, ComputeCapability minComputeCapability) {
        this(models, ANY_TIER, Set.of(), minMemoryMiB, minComputeCapability);
    }

    /**
     * The requirements in a pod's annotations. Each problem (naming the annotation and quoting the value) is added to
     * {@code problems} and that requirement read as "any"; a model the catalog does not know is a problem too.
     */
    public static CardRequirements read(Map<String, String> annotations, CardCatalog catalog, List<String> problems) {
        return new CardRequirements(models(HetgpuKeys.POD_GPU_MODELS, annotations.get(HetgpuKeys.POD_GPU_MODELS), catalog, problems),
                minTier(annotations.get(HetgpuKeys.POD_GPU_MIN_MODEL), catalog, problems),
                models(HetgpuKeys.POD_GPU_EXCLUDE_MODELS, annotations.get(HetgpuKeys.POD_GPU_EXCLUDE_MODELS), catalog, problems),
                minMemory(annotations.get(HetgpuKeys.POD_MIN_GPU_MEMORY), problems),
                minComputeCapability(annotations.get(HetgpuKeys.POD_MIN_COMPUTE_CAPABILITY), problems));
    }

    /** Whether any requirement is set. */
    public boolean isAny() {
        return models.isEmpty() && minTier.equals(ANY_TIER) && excludedModels.isEmpty() && minMemoryMiB == 0
                && minComputeCapability.equals(ANY_COMPUTE_CAPABILITY);
    }

    /** Whether the card, of the tier the reader's own table gives it, meets every requirement. */
    public boolean admits(GpuDevice device, CardTier tier) {
        return (models.isEmpty() || models.contains(device.model())) && tier.rank() >= minTier.rank()
                && !excludedModels.contains(device.model()) && device.memoryMiB() >= minMemoryMiB
                && device.computeCapability().isAtLeast(minComputeCapability);
    }

    /** Whether the card meets every requirement, its tier as {@code catalog} gives it. */
    public boolean admits(GpuDevice device, CardCatalog catalog) {
        return admits(device, minTier.equals(ANY_TIER) ? ANY_TIER : catalog.tierOf(device.model(), device.computeCapability(), device.memoryMiB()));
    }

    private static Set<String> models(String key, String text, CardCatalog catalog, List<String> problems) {
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
                problems.add(unknownModel(key, Quote.of(part.strip()) + " in " + Quote.of(text), catalog));
            }
            models.add(model);
        }
        if (models.isEmpty()) {
            problems.add(key + ": expected card models such as \"A100,H100\", got " + Quote.of(text));
        }
        return models;
    }

    /** One known model; the tier table's rank for it. */
    private static CardTier minTier(String text, CardCatalog catalog, List<String> problems) {
        if (text == null) {
            return ANY_TIER;
        }
        var key = HetgpuKeys.POD_GPU_MIN_MODEL;
        if (text.isBlank() || text.contains(",")) {
            problems.add(key + ": expected one card model such as \"A100\" (that card or any ranked above it), got " + Quote.of(text));
            return ANY_TIER;
        }
        var model = CardModel.fromProductName(text);
        if (!catalog.knows(model)) {
            // An estimated rank would move with every table change: the floor a pod names must be one the table holds.
            problems.add(unknownModel(key, Quote.of(text.strip()), catalog));
            return ANY_TIER;
        }
        return catalog.tierOf(model, ANY_COMPUTE_CAPABILITY, 0);
    }

    private static String unknownModel(String key, String quoted, CardCatalog catalog) {
        return key + ": unknown card model " + quoted + " (known: " + String.join(", ", catalog.cards().stream().map(KnownCard::model).toList())
                + "; an admin can add a model to the tier table)";
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
        var mib = bytes.divide(MIB, 0, RoundingMode.CEILING);
        // A size no long holds ("99999999999999999999999999Gi") is no typo for a card's memory, and no node can meet it.
        if (mib.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            problems.add(HetgpuKeys.POD_MIN_GPU_MEMORY + ": " + Quote.of(text) + " is more than any GPU holds (expected a memory size such as "
                    + "\"32Gi\" or \"16000Mi\")");
            return 0;
        }
        return mib.longValue();
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
