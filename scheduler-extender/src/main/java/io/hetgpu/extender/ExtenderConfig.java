package io.hetgpu.extender;

import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.hetgpu.extender.policy.EvictionFloor;
import io.hetgpu.extender.policy.HighPriorityReserve;
import io.hetgpu.extender.policy.JobHeadroom;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.extender.throughput.LearningSettings;
import io.hetgpu.gpu.cli.ParseErrors;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.KubernetesNames;
import io.hetgpu.gpu.tier.KnownCard;
import io.hetgpu.gpu.tier.TierTableFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The extender's configuration file (YAML, or JSON, which YAML reads too), version {@code v1}. Every field
 * but {@code version} is optional; the placement policy's settings sit under {@code policy}:
 *
 * <pre>{@code
 * version: v1
 * port: 8888
 * resourceName: nvidia.com/gpu
 * rackLabel: topology.hetgpu.io/rack
 * bodyLimitBytes: 16777216     # 16 MiB: NodeNames requests stay under 3 MiB at 5,000 nodes; raise for large Nodes requests
 * metricsPort: 8889           # /metrics, /healthz and /readyz only, on every address (0: none; the verbs' port serves them too)
 * schedulerNames: [hetgpu-scheduler]   # the bind verb binds only pods whose spec.schedulerName is one of these
 * httpTimeout: 5s              # kube-scheduler's extender httpTimeout: every API call of a bind ends within it
 * jobPlanDeadline: 60s         # how long a job's plan holds GPUs for its pods not bound yet
 * recordKeySecret: hetgpu-record-key   # the Secret (own namespace) with the key device records are signed with
 * maxJobPods: 4096             # the most pods a job may have to be planned whole; larger ones are refused
 * events: {enabled: true, intervalSeconds: 60}
 * policy:
 *   priority: {high: 1000, low: -1, trustedNamespaces: []}   # namespaces whose hetgpu.io/priority may raise a pod's level
 *   weights: {tier: 4, nvlink: 3, job: 3, data: 2, cpu: 5, packing: 2}   # by scorer name; 0 turns one off
 *   tiers:                    # added to or replacing entries of the built-in card table
 *     - {model: B300, rank: 110, computeCapability: "10.0", maxMemoryMiB: 294912}
 *   workloads:                # optional: pods' speed per workload class and card (hetgpu.io/workload)
 *     resnet50: {K80: 1.8, P100: 11.7, V100: 18.0}
 *   minimumSpeedShare: 0.3    # keep a class's pods off cards slower than this share of their best (learned or given; 0 off)
 *   highPriorityReserve: 8    # optional: the cluster's last 8 free top-tier GPUs go to high-priority pods only
 *   evictForFasterCards: 0.9  # a high-priority pod refuses free cards below 90 % of the speed of cards
 *                             # preemption can free for it, so that kube-scheduler preempts for the faster ones
 *   jobHeadroom: 8%           # a job of several pods below high priority starts only where 8 % of the cluster's GPUs
 *                             # (or a number: 8) stay free beyond what it needs, room kept for urgent pods (0 off); a
 *                             # pod of several GPUs in no job keeps it while smaller pods wait for 3 times as many
 *   learning:                 # how fast each workload class runs on each card, learned from pods that end
 *     enabled: true
 *     minRunSeconds: 120      # shorter runs are not measurements
 *     windowSize: 16          # samples kept per namespace, class and card
 *     maxNamespaces: 16       # namespaces kept per class and card
 *     maxClasses: 64          # classes kept (least recently seen dropped)
 *     outlierFactor: 5        # a sample this factor off the figure is refused...
 *     outlierMinSamples: 5    # ...once the figure rests on this many
 *     maxNamespaceInfluence: 2   # how far one namespace moves a figure another established
 *     explore: true           # low-priority pods try cards their class never ran on
 * }</pre>
 *
 * <p>Every bad field is reported at once, each with its path and value, as kube-scheduler validates its
 * plugins' args; the file version lets later forms change shape without misreading an older file.
 */
public record ExtenderConfig(int port, String resourceName, String rackLabel, long bodyLimitBytes,
                             PriorityThresholds priority, ScoreWeights weights, List<KnownCard> tiers,
                             boolean events, int eventIntervalSeconds, WorkloadThroughputs workloads, HighPriorityReserve reserve,
                             EvictionFloor evictionFloor, int metricsPort, List<String> schedulerNames, Duration httpTimeout,
                             Duration jobPlanDeadline, JobHeadroom jobHeadroom, String recordKeySecret, int maxJobPods,
                             LearningSettings learning) {

    /**
     * With {@code nodeCacheCapable: true} (the shipped configuration) kube-scheduler sends the pod and node names:
     * 5,000 nodes of 253-character names and a pod at etcd's 1.5 MiB object limit stay under 3 MiB. Whole Node
     * objects ({@code nodeCacheCapable: false}) are 3 to 20 KiB each (status.images dominates), so 16 MiB carries
     * a few hundred to several thousand of them; such clusters raise {@code bodyLimitBytes}.
     */
    public static final long DEFAULT_BODY_LIMIT_BYTES = 16L * 1024 * 1024;
    /**
     * The largest {@code bodyLimitBytes}: 1 GiB. Whole-Node requests at 15,000 nodes are about 84 MB at the benchmark's
     * 5.6 KB a node and 300 MB at 20 KiB a node, well below it; a body is one buffer, and Java's arrays end at 2 GiB. A
     * request is also counted against the bytes in flight (an eighth of the heap), so the heap, not this bound, decides
     * what is served: a limit above heap/8 only turns such bodies from a 413 into a 429.
     */
    static final long MAX_BODY_LIMIT_BYTES = 1L << 30;

    /** The scheduler profile the manifests deploy: the bind verb acts only on pods that name a scheduler it serves. */
    public static final String DEFAULT_SCHEDULER_NAME = "hetgpu-scheduler";
    /** kube-scheduler's extender {@code httpTimeout} as the manifests set it (kube-scheduler's own default is 30 s). */
    public static final Duration DEFAULT_HTTP_TIMEOUT = Duration.ofSeconds(5);
    /** Longest {@code httpTimeout} accepted: a bind holding a node's GPUs for longer would stall every bind to that node. */
    static final Duration MAX_HTTP_TIMEOUT = Duration.ofSeconds(60);
    /**
     * How long a job's plan holds its GPUs for pods not bound yet: kube-scheduler takes a job's pods one at a time, and
     * a pod it refused earlier comes back after a backoff of at most 10 s, so a minute covers a job of dozens of pods.
     */
    public static final Duration DEFAULT_JOB_PLAN_DEADLINE = Duration.ofSeconds(60);
    /** The longest a plan may hold GPUs that run nothing. */
    static final Duration MAX_JOB_PLAN_DEADLINE = Duration.ofMinutes(10);
    private static final java.util.regex.Pattern SECRET_NAME =
            java.util.regex.Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    private static final java.util.regex.Pattern GO_DURATION = java.util.regex.Pattern.compile("(?:(\\d+)(ms|s|m))+");
    private static final java.util.regex.Pattern GO_DURATION_PART = java.util.regex.Pattern.compile("(\\d+)(ms|s|m)");

    /**
     * The most pods a job may have to be planned whole as shipped: as large as real training jobs get. A plan's time and
     * memory grow with its pods, and one namespace's job must not take the extender every namespace waits on.
     */
    public static final int DEFAULT_MAX_JOB_PODS = 4096;
    /** The largest {@code maxJobPods} accepted: a plan of more must still end within its budget of httpTimeout. */
    static final int MAX_JOB_PODS = 65_536;

    /** The Secret, in the extender's own namespace, that holds the key its device records are signed with. */
    public static final String DEFAULT_RECORD_KEY_SECRET = "hetgpu-record-key";

    // The shipped policy. Chosen in the simulator on seeds 1-10 of Gavel's workload, with the table learned as a cluster
    // would learn it; docs/benchmarks.md#learning gives the figures on seeds that chose nothing. The eviction floor is
    // what brings high-priority jobs near the ceiling; it counts only GPUs preemption could free without breaking a
    // PodDisruptionBudget, so it never sends an urgent pod to guarded pods' cards while unguarded ones would do.
    public static final double DEFAULT_MINIMUM_SPEED_SHARE = 0.3;
    public static final EvictionFloor DEFAULT_EVICT_FOR_FASTER_CARDS = new EvictionFloor(0.9);
    public static final JobHeadroom DEFAULT_JOB_HEADROOM = JobHeadroom.percent(8);

    public static final ExtenderConfig DEFAULTS = new ExtenderConfig(8888, HetgpuKeys.DEFAULT_RESOURCE_NAME, HetgpuKeys.LABEL_RACK,
            DEFAULT_BODY_LIMIT_BYTES, PriorityThresholds.DEFAULTS, ScoreWeights.DEFAULTS, List.of(), true, 60,
            WorkloadThroughputs.NONE.withMinimumShare(DEFAULT_MINIMUM_SPEED_SHARE), HighPriorityReserve.NONE, DEFAULT_EVICT_FOR_FASTER_CARDS, 0,
            List.of(DEFAULT_SCHEDULER_NAME), DEFAULT_HTTP_TIMEOUT, DEFAULT_JOB_PLAN_DEADLINE, DEFAULT_JOB_HEADROOM, DEFAULT_RECORD_KEY_SECRET,
            DEFAULT_MAX_JOB_PODS, LearningSettings.DEFAULTS);

    public ExtenderConfig {
        tiers = List.copyOf(tiers);
        schedulerNames = List.copyOf(schedulerNames);
        java.util.Objects.requireNonNull(httpTimeout, "httpTimeout");
        java.util.Objects.requireNonNull(jobPlanDeadline, "jobPlanDeadline");
        java.util.Objects.requireNonNull(workloads, "workloads");
        java.util.Objects.requireNonNull(reserve, "reserve");
        java.util.Objects.requireNonNull(evictionFloor, "evictionFloor");
        java.util.Objects.requireNonNull(jobHeadroom, "jobHeadroom");
        java.util.Objects.requireNonNull(recordKeySecret, "recordKeySecret");
        java.util.Objects.requireNonNull(learning, "learning");
    }

    /** A configuration file that cannot be used; the message is one line naming each bad field and its value. */
    public static final class ConfigException extends Exception {
        public ConfigException(String message) {
            super(message);
        }
    }

    // The file's shape: every field nullable, so that what is absent keeps its default.
    record FilePriority(Integer high, Integer low, List<String> trustedNamespaces) {
    }

    /** Declares the entries' shape for the strict reader; {@link TierTableFile} turns them into cards. */
    record FileTier(String model, Integer rank, String computeCapability, Long maxMemoryMiB) {
    }

    record FileEvents(Boolean enabled, Integer intervalSeconds) {
    }

    record FilePolicy(FilePriority priority, Map<String, Integer> weights, List<FileTier> tiers,
                      Map<String, Map<String, Double>> workloads, Double minimumSpeedShare, Integer highPriorityReserve,
                      Double evictForFasterCards, String jobHeadroom, FileLearning learning) {
    }

    record FileLearning(Boolean enabled, Double minRunSeconds, Integer windowSize, Integer maxNamespaces, Integer maxClasses,
                        Double outlierFactor, Integer outlierMinSamples, Double maxNamespaceInfluence, Boolean explore) {
    }

    record FileConfig(String version, Integer port, String resourceName, String rackLabel, Long bodyLimitBytes,
                      FileEvents events, FilePolicy policy, Integer metricsPort, List<String> schedulerNames, String httpTimeout,
                      String jobPlanDeadline, String recordKeySecret, Integer maxJobPods) {
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
        if (text.isBlank()) {
            return DEFAULTS;
        }
        var errors = new FieldErrors();
        // A key given twice is refused, not read as its last value; a fraction where a whole number is expected is
        // refused, not truncated (port: 18103.9 is not port 18103).
        var mapper = YAMLMapper.builder().addHandler(errors.collector()).addModule(FieldErrors.wholeNumbers())
                .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
        FileConfig file;
        try {
            var tree = mapper.readTree(text);
            if (tree == null || tree.isMissingNode() || tree.isNull()) {
                return DEFAULTS;
            }
            if (!tree.isObject()) {
                throw new ConfigException(source + ": expected a mapping of settings, got " + tree.getNodeType().name().toLowerCase(java.util.Locale.ROOT));
            }
            ConfigVersion.check(tree, source);
            file = mapper.treeToValue(tree, FileConfig.class);
        } catch (com.fasterxml.jackson.core.JsonParseException e) {
            var duplicate = FieldErrors.duplicateKey(e);
            if (duplicate.isPresent()) {
                throw new ConfigException(source + ": " + duplicate.get());
            }
            throw new ConfigException(source + ": " + ParseErrors.at(e) + "not YAML or JSON: " + ParseErrors.sentences(e));
        } catch (IOException e) {
            throw new ConfigException(source + ": not YAML or JSON: " + e.getMessage().lines().findFirst().orElse(""));
        }
        var config = DEFAULTS.with(file, errors);
        if (errors.isEmpty()) {
            try {
                // The same reader the device plugin uses on this file, so both accept the same tier table.
                config = config.withTiers(TierTableFile.read(text, source));
            } catch (IllegalArgumentException e) {
                throw new ConfigException(e.getMessage());
            }
        }
        errors.throwIfAny(source);
        return config;
    }

    private ExtenderConfig with(FileConfig file, FieldErrors errors) {
        int newPort = file.port() == null ? port : file.port();
        errors.check(newPort >= 0 && newPort <= 65535, "port", newPort, "expected 0..65535");
        var newResource = file.resourceName() == null ? resourceName : file.resourceName();
        KubernetesNames.resourceNameProblem(newResource).ifPresent(problem -> errors.add("resourceName", problem));
        var newRack = file.rackLabel() == null ? rackLabel : file.rackLabel();
        KubernetesNames.labelKeyProblem(newRack).ifPresent(problem -> errors.add("rackLabel", problem));
        long limit = file.bodyLimitBytes() == null ? bodyLimitBytes : file.bodyLimitBytes();
        errors.check(limit >= 1024 && limit <= MAX_BODY_LIMIT_BYTES, "bodyLimitBytes", limit,
                "expected 1024 to 1073741824 (1 GiB; whole-Node requests at 15,000 nodes need about 84 to 300 MB)");
        boolean newEvents = events;
        int newInterval = eventIntervalSeconds;
        if (file.events() != null) {
            newEvents = file.events().enabled() == null ? events : file.events().enabled();
            newInterval = file.events().intervalSeconds() == null ? eventIntervalSeconds : file.events().intervalSeconds();
            errors.check(newInterval >= 1, "events.intervalSeconds", newInterval, "expected at least 1");
        }
        int newMetricsPort = file.metricsPort() == null ? metricsPort : file.metricsPort();
        errors.check(newMetricsPort >= 0 && newMetricsPort <= 65535, "metricsPort", newMetricsPort, "expected 0..65535 (0: no metrics port)");
        errors.check(newMetricsPort == 0 || newMetricsPort != newPort, "metricsPort", newMetricsPort, "must differ from port");
        var newSchedulers = file.schedulerNames() == null ? schedulerNames : file.schedulerNames();
        errors.check(!newSchedulers.isEmpty(), "schedulerNames", newSchedulers, "expected at least one scheduler name");
        for (int i = 0; i < newSchedulers.size(); i++) {
            var name = newSchedulers.get(i);
            errors.check(name != null && !name.isBlank(), "schedulerNames[" + i + "]", name, "expected a scheduler name");
            if (name != null && !name.isBlank() && newSchedulers.subList(0, i).contains(name)) {
                errors.add("schedulerNames[" + i + "]", name, "given twice");
            }
        }
        var newTimeout = httpTimeout;
        if (file.httpTimeout() != null) {
            newTimeout = goDuration(file.httpTimeout());
            if (newTimeout == null || newTimeout.isZero() || newTimeout.compareTo(MAX_HTTP_TIMEOUT) > 0) {
                errors.add("httpTimeout", file.httpTimeout(), "expected a duration above 0 and at most 60s, as in kube-scheduler's extender httpTimeout (5s, 1500ms, 1m)");
                newTimeout = httpTimeout;
            }
        }
        var newPlanDeadline = jobPlanDeadline;
        if (file.jobPlanDeadline() != null) {
            newPlanDeadline = goDuration(file.jobPlanDeadline());
            if (newPlanDeadline == null || newPlanDeadline.compareTo(newTimeout) <= 0 || newPlanDeadline.compareTo(MAX_JOB_PLAN_DEADLINE) > 0) {
                errors.add("jobPlanDeadline", file.jobPlanDeadline(), "expected a duration above httpTimeout (" + newTimeout.toMillis()
                        + "ms) and at most 10m (60s, 2m, 90s): a plan must outlive a bind");
                newPlanDeadline = jobPlanDeadline;
            }
        }
        var policy = file.policy() == null ? new FilePolicy(null, null, null, null, null, null, null, null, null) : file.policy();
        var newLearning = learningOf(policy.learning(), errors);
        return new ExtenderConfig(newPort, newResource, newRack, limit, priorityOf(policy.priority(), errors),
                weightsOf(policy.weights(), errors), tiers, newEvents, newInterval, workloadsOf(policy, errors),
                errors.attempt("policy.", () -> policy.highPriorityReserve() == null ? reserve : new HighPriorityReserve(policy.highPriorityReserve()),
                        reserve),
                errors.attempt("policy.", () -> policy.evictForFasterCards() == null ? evictionFloor : new EvictionFloor(policy.evictForFasterCards()),
                        evictionFloor), newMetricsPort, newSchedulers.stream().filter(name -> name != null && !name.isBlank()).toList(),
                newTimeout, newPlanDeadline,
                errors.attempt("policy.", () -> policy.jobHeadroom() == null ? jobHeadroom : JobHeadroom.parse(policy.jobHeadroom()), jobHeadroom),
                recordKeySecretOf(file.recordKeySecret(), errors), maxJobPodsOf(file.maxJobPods(), errors), newLearning);
    }

    /**
     * {@code policy.learning}: each field given replaces the current one, checked on its own so that every bad field is
     * reported at once.
     */
    private LearningSettings learningOf(FileLearning file, FieldErrors errors) {
        if (file == null) {
            return learning;
        }
        var result = learning;
        var l = result;
        if (file.enabled() != null) {
            result = result.withEnabled(file.enabled());
        }
        result = field(errors, result, file.minRunSeconds(), v -> new LearningSettings(l.enabled(), v, l.windowSize(), l.maxNamespaces(),
                l.maxClasses(), l.outlierFactor(), l.outlierMinSamples(), l.maxNamespaceInfluence(), l.explore()));
        result = field(errors, result, file.windowSize(), v -> new LearningSettings(l.enabled(), l.minRunSeconds(), v, l.maxNamespaces(),
                l.maxClasses(), l.outlierFactor(), l.outlierMinSamples(), l.maxNamespaceInfluence(), l.explore()));
        result = field(errors, result, file.maxNamespaces(), v -> new LearningSettings(l.enabled(), l.minRunSeconds(), l.windowSize(), v,
                l.maxClasses(), l.outlierFactor(), l.outlierMinSamples(), l.maxNamespaceInfluence(), l.explore()));
        result = field(errors, result, file.maxClasses(), v -> new LearningSettings(l.enabled(), l.minRunSeconds(), l.windowSize(),
                l.maxNamespaces(), v, l.outlierFactor(), l.outlierMinSamples(), l.maxNamespaceInfluence(), l.explore()));
        result = field(errors, result, file.outlierFactor(), v -> new LearningSettings(l.enabled(), l.minRunSeconds(), l.windowSize(),
                l.maxNamespaces(), l.maxClasses(), v, l.outlierMinSamples(), l.maxNamespaceInfluence(), l.explore()));
        result = field(errors, result, file.outlierMinSamples(), v -> new LearningSettings(l.enabled(), l.minRunSeconds(), l.windowSize(),
                l.maxNamespaces(), l.maxClasses(), l.outlierFactor(), v, l.maxNamespaceInfluence(), l.explore()));
        result = field(errors, result, file.maxNamespaceInfluence(), v -> new LearningSettings(l.enabled(), l.minRunSeconds(),
                l.windowSize(), l.maxNamespaces(), l.maxClasses(), l.outlierFactor(), l.outlierMinSamples(), v, l.explore()));
        if (file.explore() != null) {
            var r = result;
            result = new LearningSettings(r.enabled(), r.minRunSeconds(), r.windowSize(), r.maxNamespaces(), r.maxClasses(),
                    r.outlierFactor(), r.outlierMinSamples(), r.maxNamespaceInfluence(), file.explore());
        }
        return result;
    }

    /**
     * One field of {@code policy.learning} applied to the defaults alone (so its check names it and no other), then to
     * what has been read so far; a bad value is reported and the field keeps its value.
     */
    private <V> LearningSettings field(FieldErrors errors, LearningSettings soFar, V given,
                                       java.util.function.Function<V, LearningSettings> onDefaults) {
        if (given == null) {
            return soFar;
        }
        var alone = errors.attempt("policy.", () -> onDefaults.apply(given), null);
        if (alone == null) {
            return soFar;
        }
        // Copy the one field that differs from the base onto what has been read so far.
        return merge(soFar, alone, learning);
    }

    /** {@code soFar} with every field in which {@code changed} differs from {@code base} taken from {@code changed}. */
    private static LearningSettings merge(LearningSettings soFar, LearningSettings changed, LearningSettings base) {
        return new LearningSettings(soFar.enabled(),
                changed.minRunSeconds() != base.minRunSeconds() ? changed.minRunSeconds() : soFar.minRunSeconds(),
                changed.windowSize() != base.windowSize() ? changed.windowSize() : soFar.windowSize(),
                changed.maxNamespaces() != base.maxNamespaces() ? changed.maxNamespaces() : soFar.maxNamespaces(),
                changed.maxClasses() != base.maxClasses() ? changed.maxClasses() : soFar.maxClasses(),
                changed.outlierFactor() != base.outlierFactor() ? changed.outlierFactor() : soFar.outlierFactor(),
                changed.outlierMinSamples() != base.outlierMinSamples() ? changed.outlierMinSamples() : soFar.outlierMinSamples(),
                changed.maxNamespaceInfluence() != base.maxNamespaceInfluence() ? changed.maxNamespaceInfluence() : soFar.maxNamespaceInfluence(),
                soFar.explore());
    }

    private int maxJobPodsOf(Integer given, FieldErrors errors) {
        if (given == null) {
            return maxJobPods;
        }
        errors.check(given >= 2 && given <= MAX_JOB_PODS, "maxJobPods", given, "expected 2 to " + MAX_JOB_PODS
                + ": the most pods a job may have to be planned whole (a plan's time and memory grow with them)");
        return given >= 2 && given <= MAX_JOB_PODS ? given : maxJobPods;
    }

    private String recordKeySecretOf(String given, FieldErrors errors) {
        if (given == null) {
            return recordKeySecret;
        }
        boolean valid = given.length() <= 253 && SECRET_NAME.matcher(given).matches();
        errors.check(valid, "recordKeySecret", given, "expected a Secret name: lower-case letters, digits, '-' and '.', "
                + "starting and ending with a letter or digit, at most 253 characters");
        return valid ? given : recordKeySecret;
    }

    /** The command line's {@code --resource-name}, checked by the file's rule. */
    public static void checkResourceName(String flag, String name) throws ConfigException {
        var problem = KubernetesNames.resourceNameProblem(name);
        if (problem.isPresent()) {
            throw new ConfigException(flag + ": " + problem.get());
        }
    }

    /** A Go duration of whole milliseconds, seconds and minutes ({@code 5s}, {@code 1m30s}, {@code 1500ms}), or null. */
    static Duration goDuration(String text) {
        if (!GO_DURATION.matcher(text).matches()) {
            return null;
        }
        var total = Duration.ZERO;
        var parts = GO_DURATION_PART.matcher(text);
        while (parts.find()) {
            long amount;
            try {
                amount = Long.parseLong(parts.group(1));
            } catch (NumberFormatException e) {
                return null;
            }
            total = total.plus(switch (parts.group(2)) {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                default -> Duration.ofMinutes(amount);
            });
        }
        return total;
    }

    private PriorityThresholds priorityOf(FilePriority file, FieldErrors errors) {
        if (file == null) {
            return priority;
        }
        int high = file.high() == null ? priority.high() : file.high();
        int low = file.low() == null ? priority.low() : file.low();
        var trusted = file.trustedNamespaces() == null ? priority.trustedNamespaces() : trustedNamespaces(file.trustedNamespaces(), errors);
        return errors.attempt("policy.priority: ", () -> new PriorityThresholds(high, low, trusted), priority);
    }

    /** The namespaces whose pods' priority annotation may raise them, each checked as a namespace's name. */
    private static java.util.Set<String> trustedNamespaces(List<String> names, FieldErrors errors) {
        var trusted = new java.util.TreeSet<String>();
        for (int i = 0; i < names.size(); i++) {
            var path = "policy.priority.trustedNamespaces[" + i + "]";
            var name = names.get(i);
            var problem = KubernetesNames.namespaceProblem(name);
            if (problem.isPresent()) {
                errors.add(path, problem.get());
            } else if (!trusted.add(name)) {
                errors.add(path, name, "given twice");
            }
        }
        return trusted;
    }

    /** Weights by scorer name, checked against the registered scorers; a name not given keeps its value. */
    private ScoreWeights weightsOf(Map<String, Integer> file, FieldErrors errors) {
        if (file == null) {
            return weights;
        }
        var named = new java.util.LinkedHashMap<>(weights.byName());
        boolean valid = true;
        for (var entry : file.entrySet()) {
            var path = "policy.weights." + entry.getKey();
            var problem = ScoreWeights.problem(entry.getKey(), entry.getValue());
            if (entry.getValue() == null && errors.reported(path)) {
                valid = false;
            } else if (problem.isPresent()) {
                errors.add(path, entry.getValue(), problem.get());
                valid = false;
            } else {
                named.put(entry.getKey(), entry.getValue());
            }
        }
        return valid ? errors.attempt("policy.weights: ", () -> new ScoreWeights(named), weights) : weights;
    }

    /**
     * The admin's table and its minimum share. A share with neither a table nor learning compares nothing and is kept
     * all the same: the shipped file sets it, and an admin who turns learning off must not have to delete it.
     */
    private WorkloadThroughputs workloadsOf(FilePolicy policy, FieldErrors errors) {
        var result = workloads;
        if (policy.workloads() != null) {
            result = errors.attempt("policy.", () -> new WorkloadThroughputs(policy.workloads(), workloads.minimumShare()), workloads);
        }
        if (policy.minimumSpeedShare() != null) {
            var withTable = result;
            result = errors.attempt("policy.", () -> withTable.withMinimumShare(policy.minimumSpeedShare()), withTable);
        }
        return result;
    }

    private ExtenderConfig withTiers(List<KnownCard> fileTiers) {
        var all = new ArrayList<>(tiers);
        all.addAll(fileTiers);
        return new ExtenderConfig(port, resourceName, rackLabel, bodyLimitBytes, priority, weights, all, events, eventIntervalSeconds, workloads, reserve, evictionFloor,
                metricsPort, schedulerNames, httpTimeout, jobPlanDeadline, jobHeadroom, recordKeySecret, maxJobPods, learning);
    }

    /** The placement settings of the file's {@code policy:} group. */
    public PolicySettings policy() {
        return new PolicySettings(priority, weights, workloads, reserve, evictionFloor, jobHeadroom);
    }

    public ExtenderConfig withPort(int newPort) {
        return new ExtenderConfig(newPort, resourceName, rackLabel, bodyLimitBytes, priority, weights, tiers, events, eventIntervalSeconds, workloads, reserve, evictionFloor,
                metricsPort, schedulerNames, httpTimeout, jobPlanDeadline, jobHeadroom, recordKeySecret, maxJobPods, learning);
    }

    public ExtenderConfig withResourceName(String name) {
        return new ExtenderConfig(port, name, rackLabel, bodyLimitBytes, priority, weights, tiers, events, eventIntervalSeconds, workloads, reserve, evictionFloor,
                metricsPort, schedulerNames, httpTimeout, jobPlanDeadline, jobHeadroom, recordKeySecret, maxJobPods, learning);
    }

    public ExtenderConfig withPriority(PriorityThresholds thresholds) {
        return new ExtenderConfig(port, resourceName, rackLabel, bodyLimitBytes, thresholds, weights, tiers, events, eventIntervalSeconds, workloads, reserve, evictionFloor,
                metricsPort, schedulerNames, httpTimeout, jobPlanDeadline, jobHeadroom, recordKeySecret, maxJobPods, learning);
    }

    public ExtenderConfig withMetricsPort(int newMetricsPort) {
        return new ExtenderConfig(port, resourceName, rackLabel, bodyLimitBytes, priority, weights, tiers, events, eventIntervalSeconds, workloads,
                reserve, evictionFloor, newMetricsPort, schedulerNames, httpTimeout, jobPlanDeadline, jobHeadroom, recordKeySecret, maxJobPods, learning);
    }

    public ExtenderConfig withSchedulerNames(List<String> names) {
        return new ExtenderConfig(port, resourceName, rackLabel, bodyLimitBytes, priority, weights, tiers, events, eventIntervalSeconds, workloads,
                reserve, evictionFloor, metricsPort, names, httpTimeout, jobPlanDeadline, jobHeadroom, recordKeySecret, maxJobPods, learning);
    }

    public ExtenderConfig withHttpTimeout(Duration timeout) {
        return new ExtenderConfig(port, resourceName, rackLabel, bodyLimitBytes, priority, weights, tiers, events, eventIntervalSeconds, workloads,
                reserve, evictionFloor, metricsPort, schedulerNames, timeout, jobPlanDeadline, jobHeadroom, recordKeySecret, maxJobPods, learning);
    }

    public ExtenderConfig withJobPlanDeadline(Duration deadline) {
        return new ExtenderConfig(port, resourceName, rackLabel, bodyLimitBytes, priority, weights, tiers, events, eventIntervalSeconds, workloads,
                reserve, evictionFloor, metricsPort, schedulerNames, httpTimeout, deadline, jobHeadroom, recordKeySecret, maxJobPods, learning);
    }

    public ExtenderConfig withEvictionFloor(EvictionFloor floor) {
        return new ExtenderConfig(port, resourceName, rackLabel, bodyLimitBytes, priority, weights, tiers, events, eventIntervalSeconds, workloads,
                reserve, floor, metricsPort, schedulerNames, httpTimeout, jobPlanDeadline, jobHeadroom, recordKeySecret, maxJobPods, learning);
    }

    public ExtenderConfig withLearning(LearningSettings settings) {
        return new ExtenderConfig(port, resourceName, rackLabel, bodyLimitBytes, priority, weights, tiers, events, eventIntervalSeconds, workloads,
                reserve, evictionFloor, metricsPort, schedulerNames, httpTimeout, jobPlanDeadline, jobHeadroom, recordKeySecret, maxJobPods, settings);
    }

    public ExtenderConfig withJobHeadroom(JobHeadroom headroom) {
        return new ExtenderConfig(port, resourceName, rackLabel, bodyLimitBytes, priority, weights, tiers, events, eventIntervalSeconds, workloads,
                reserve, evictionFloor, metricsPort, schedulerNames, httpTimeout, jobPlanDeadline, headroom, recordKeySecret, maxJobPods, learning);
    }
}
