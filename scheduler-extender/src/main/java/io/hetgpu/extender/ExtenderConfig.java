package io.hetgpu.extender;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.hetgpu.extender.http.ServerOptions;
import io.hetgpu.extender.policy.HighPriorityReserve;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.tier.KnownCard;
import io.hetgpu.gpu.tier.TierTableFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The extender's configuration file (YAML, or JSON, which YAML reads too). Every field is optional:
 *
 * <pre>{@code
 * port: 8888
 * resourceName: nvidia.com/gpu
 * rackLabel: topology.hetgpu.io/rack
 * bodyLimitBytes: 16777216     # 16 MiB: NodeNames requests stay under 3 MiB at 5,000 nodes; raise for large Nodes requests
 * priority: {high: 1000, low: -1}
 * weights: {tier: 4, nvlink: 3, job: 3, data: 2, cpu: 5}
 * tiers:                      # added to or replacing entries of the built-in card table
 *   - {model: B300, rank: 110, computeCapability: "10.0", maxMemoryMiB: 294912}
 * events: {enabled: true, intervalSeconds: 60}
 * workloads:                  # optional: pods' speed per workload class and card (hetgpu.io/workload)
 *   resnet50: {K80: 1.8, P100: 11.7, V100: 18.0}
 * minimumSpeedShare: 0.25     # optional, with workloads: keep such pods off cards slower than this share of their best
 * highPriorityReserve: 8      # optional: the cluster's last 8 free top-tier GPUs go to high-priority pods only
 * }</pre>
 */
public record ExtenderConfig(int port, String resourceName, String rackLabel, long bodyLimitBytes,
                             PriorityThresholds priority, ScoreWeights weights, List<KnownCard> tiers,
                             boolean events, int eventIntervalSeconds, WorkloadThroughputs workloads, HighPriorityReserve reserve) {

    public static final ExtenderConfig DEFAULTS = new ExtenderConfig(8888, HetgpuKeys.DEFAULT_RESOURCE_NAME, HetgpuKeys.LABEL_RACK,
            ServerOptions.DEFAULT_BODY_LIMIT, PriorityThresholds.DEFAULTS, ScoreWeights.DEFAULTS, List.of(), true, 60, WorkloadThroughputs.NONE,
            HighPriorityReserve.NONE);

    public ExtenderConfig {
        tiers = List.copyOf(tiers);
        java.util.Objects.requireNonNull(workloads, "workloads");
        java.util.Objects.requireNonNull(reserve, "reserve");
    }

    /** A configuration file that cannot be used; the message is one line naming the field and the value. */
    public static final class ConfigException extends Exception {
        public ConfigException(String message) {
            super(message);
        }
    }

    // The file's shape: every field nullable, so that what is absent keeps its default.
    record FileWeights(Integer tier, Integer nvlink, Integer job, Integer data, Integer cpu) {
    }

    record FilePriority(Integer high, Integer low) {
    }

    /** Declares the entries' shape for the strict reader; {@link TierTableFile} turns them into cards. */
    record FileTier(String model, Integer rank, String computeCapability, Long maxMemoryMiB) {
    }

    record FileEvents(Boolean enabled, Integer intervalSeconds) {
    }

    record FileConfig(Integer port, String resourceName, String rackLabel, Long bodyLimitBytes, FilePriority priority,
                      FileWeights weights, List<FileTier> tiers, FileEvents events, Map<String, Map<String, Double>> workloads,
                      Double minimumSpeedShare, Integer highPriorityReserve) {
    }

    public static ExtenderConfig load(Path file) throws ConfigException {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new ConfigException("config file " + file + " does not exist");
        } catch (IOException e) {
            throw new ConfigException("config file " + file + " cannot be read: " + e.getMessage());
        }
        return parse(text, file.toString());
    }

    public static ExtenderConfig parse(String text, String source) throws ConfigException {
        var mapper = YAMLMapper.builder().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES).build();
        FileConfig file;
        try {
            file = text.isBlank() ? null : mapper.readValue(text, FileConfig.class);
        } catch (UnrecognizedPropertyException e) {
            throw new ConfigException(source + ": unknown field " + path(e) + " (known: "
                    + e.getKnownPropertyIds().stream().map(Object::toString).sorted().collect(Collectors.joining(", ")) + ")");
        } catch (InvalidFormatException e) {
            throw new ConfigException(source + ": " + path(e) + ": expected " + describe(e.getTargetType()) + ", got \"" + e.getValue() + "\"");
        } catch (MismatchedInputException e) {
            throw new ConfigException(source + ": " + path(e) + ": expected " + describe(e.getTargetType()));
        } catch (IOException e) {
            throw new ConfigException(source + ": not YAML or JSON: " + e.getMessage().lines().findFirst().orElse(""));
        }
        if (file == null) {
            return DEFAULTS;
        }
        List<KnownCard> tiers;
        try {
            // The same reader the device plugin uses on this file, so both accept the same tier table.
            tiers = TierTableFile.read(text, source);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
        return DEFAULTS.with(file, tiers, source);
    }

    private ExtenderConfig with(FileConfig file, List<KnownCard> fileTiers, String source) throws ConfigException {
        int newPort = file.port() == null ? port : file.port();
        if (newPort < 0 || newPort > 65535) {
            throw new ConfigException(source + ": port: expected 0..65535, got " + newPort);
        }
        var newResource = file.resourceName() == null ? resourceName : file.resourceName();
        if (!newResource.matches("([a-z0-9.-]+/)?[A-Za-z0-9._-]+")) {
            throw new ConfigException(source + ": resourceName: expected a resource name such as nvidia.com/gpu, got \"" + newResource + "\"");
        }
        var newRack = file.rackLabel() == null ? rackLabel : file.rackLabel();
        long limit = file.bodyLimitBytes() == null ? bodyLimitBytes : file.bodyLimitBytes();
        if (limit < 1024) {
            throw new ConfigException(source + ": bodyLimitBytes: expected at least 1024, got " + limit);
        }
        var newPriority = priority;
        if (file.priority() != null) {
            int high = file.priority().high() == null ? priority.high() : file.priority().high();
            int low = file.priority().low() == null ? priority.low() : file.priority().low();
            try {
                newPriority = new PriorityThresholds(high, low);
            } catch (IllegalArgumentException e) {
                throw new ConfigException(source + ": priority: " + e.getMessage());
            }
        }
        var newWeights = weights;
        if (file.weights() != null) {
            var w = file.weights();
            try {
                newWeights = new ScoreWeights(or(w.tier(), weights.tier(), "tier", source), or(w.nvlink(), weights.nvlink(), "nvlink", source),
                        or(w.job(), weights.job(), "job", source), or(w.data(), weights.data(), "data", source), or(w.cpu(), weights.cpu(), "cpu", source));
            } catch (IllegalArgumentException e) {
                throw new ConfigException(source + ": weights: " + e.getMessage());
            }
        }
        var newTiers = new ArrayList<>(tiers);
        newTiers.addAll(fileTiers);
        boolean newEvents = events;
        int newInterval = eventIntervalSeconds;
        if (file.events() != null) {
            newEvents = file.events().enabled() == null ? events : file.events().enabled();
            newInterval = file.events().intervalSeconds() == null ? eventIntervalSeconds : file.events().intervalSeconds();
            if (newInterval < 1) {
                throw new ConfigException(source + ": events.intervalSeconds: expected at least 1, got " + newInterval);
            }
        }
        var newWorkloads = workloads;
        if (file.workloads() != null) {
            try {
                newWorkloads = new WorkloadThroughputs(file.workloads(), workloads.minimumShare());
            } catch (IllegalArgumentException e) {
                throw new ConfigException(source + ": " + e.getMessage());
            }
        }
        if (file.minimumSpeedShare() != null) {
            if (newWorkloads.isEmpty()) {
                throw new ConfigException(source + ": minimumSpeedShare: " + file.minimumSpeedShare()
                        + " needs a workloads: table to compare cards with");
            }
            try {
                newWorkloads = newWorkloads.withMinimumShare(file.minimumSpeedShare());
            } catch (IllegalArgumentException e) {
                throw new ConfigException(source + ": " + e.getMessage());
            }
        }
        var newReserve = reserve;
        if (file.highPriorityReserve() != null) {
            try {
                newReserve = new HighPriorityReserve(file.highPriorityReserve());
            } catch (IllegalArgumentException e) {
                throw new ConfigException(source + ": " + e.getMessage());
            }
        }
        return new ExtenderConfig(newPort, newResource, newRack, limit, newPriority, newWeights, newTiers, newEvents, newInterval,
                newWorkloads, newReserve);
    }

    private static int or(Integer value, int fallback, String field, String source) throws ConfigException {
        int result = value == null ? fallback : value;
        if (result < 0 || result > 100) {
            throw new ConfigException(source + ": weights." + field + ": expected 0..100, got " + result);
        }
        return result;
    }

    private static String path(JsonMappingException e) {
        var text = new StringBuilder();
        for (var reference : e.getPath()) {
            if (reference.getFieldName() != null) {
                text.append(text.isEmpty() ? "" : ".").append(reference.getFieldName());
            } else {
                text.append('[').append(reference.getIndex()).append(']');
            }
        }
        return text.isEmpty() ? "(top level)" : text.toString();
    }

    private static String describe(Class<?> type) {
        if (type == null) {
            return "a different value";
        }
        if (type == Integer.class || type == int.class || type == Long.class || type == long.class) {
            return "an integer";
        }
        if (type == Double.class || type == double.class) {
            return "a number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        if (type == String.class) {
            return "a string";
        }
        if (List.class.isAssignableFrom(type)) {
            return "a list";
        }
        return "a mapping";
    }

    public ExtenderConfig withPort(int newPort) {
        return new ExtenderConfig(newPort, resourceName, rackLabel, bodyLimitBytes, priority, weights, tiers, events, eventIntervalSeconds, workloads, reserve);
    }

    public ExtenderConfig withResourceName(String name) {
        return new ExtenderConfig(port, name, rackLabel, bodyLimitBytes, priority, weights, tiers, events, eventIntervalSeconds, workloads, reserve);
    }

    public ExtenderConfig withPriority(PriorityThresholds thresholds) {
        return new ExtenderConfig(port, resourceName, rackLabel, bodyLimitBytes, thresholds, weights, tiers, events, eventIntervalSeconds, workloads, reserve);
    }
}
