package io.hetgpu.deviceplugin;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.deviceplugin.devices.DeviceListStrategy;
import io.hetgpu.deviceplugin.dra.DraPlugin;
import io.hetgpu.deviceplugin.node.ApiServerTrust;
import io.hetgpu.gpu.cli.OneLineErrors;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.KubernetesNames;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.tier.TierTableFile;
import io.hetgpu.gpu.release.ReleaseVersion;
import io.hetgpu.gpu.Quote;
import io.hetgpu.nvml.GpuSources;
import io.hetgpu.nvml.NvmlOptions;
import io.hetgpu.nvml.XidCatalogue;
import io.hetgpu.nvml.XidRules;
import io.hetgpu.nvml.XidSelection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.nio.file.Files;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** The hetgpu device plugin: the DaemonSet's one process on every GPU node. */
@Command(name = "hetgpu-device-plugin", mixinStandardHelpOptions = true, versionProvider = ReleaseVersion.class,
        sortOptions = false,
        description = "Advertises this node's GPUs to kubelet (device plugin API v1beta1), hands out the best-connected "
                + "GPU sets, streams health, and publishes the node's GPU inventory and free devices on its Node object; with "
                + "--kubelet-api dra, serves them as a DRA driver instead (ResourceSlices, kubelet's DRA plugin API, CDI specs).")
public final class DevicePluginMain implements Callable<Integer> {

    private static final Logger log = LoggerFactory.getLogger(DevicePluginMain.class);

    /** Where sticky GPU health marks are kept, relative to {@code --device-plugin-dir}. */
    static final Path HEALTH_MARKS = Path.of("hetgpu", "gpu-health-marks");

    /** The one kubelet API the node agent serves the node's GPUs through. */
    enum KubeletApi {
        DEVICE_PLUGIN("device-plugin"), DRA("dra");

        final String flag;

        KubeletApi(String flag) {
            this.flag = flag;
        }

        @Override
        public String toString() {
            return flag;
        }
    }

    @Option(names = "--kubelet-api", paramLabel = "device-plugin|dra", defaultValue = "device-plugin", converter = KubeletApiConverter.class,
            description = "How kubelet learns of the GPUs: device-plugin (the extended resource) or dra (a DRA driver: "
                    + "ResourceSlices and kubelet's DRA plugin API). One per node, never both for the same GPUs. Default: ${DEFAULT-VALUE}")
    KubeletApi kubeletApi;

    @Option(names = "--driver-name", paramLabel = "NAME", defaultValue = HetgpuDra.DRIVER,
            description = "DRA mode: the DRA driver's name, in the ResourceSlices and DeviceClasses. Default: ${DEFAULT-VALUE}")
    String driverName;

    @Option(names = "--plugin-registry-dir", paramLabel = "DIR", defaultValue = "/var/lib/kubelet/plugins_registry",
            description = "DRA mode: kubelet's plugin registry folder, where <driver>-reg.sock is served. Default: ${DEFAULT-VALUE}")
    Path pluginRegistryDir;

    @Option(names = "--dra-plugin-dir", paramLabel = "DIR", defaultValue = "/var/lib/kubelet/plugins",
            description = "DRA mode: kubelet's plugins folder; the driver's dra.sock and checkpoint are in <DIR>/<driver>. Default: ${DEFAULT-VALUE}")
    Path draPluginDir;

    @Option(names = "--cdi-dir", paramLabel = "DIR", defaultValue = "/var/run/cdi",
            description = "DRA mode: where a CDI spec is written for each prepared claim (the container runtime's CDI folder). Default: ${DEFAULT-VALUE}")
    Path cdiDir;

    @Option(names = "--device-plugin-dir", paramLabel = "DIR", defaultValue = "/var/lib/kubelet/device-plugins",
            description = "kubelet's device-plugin folder (kubelet.sock lives there). Default: ${DEFAULT-VALUE}")
    Path devicePluginDir;

    @Option(names = "--pod-resources-socket", paramLabel = "SOCKET", defaultValue = "/var/lib/kubelet/pod-resources/kubelet.sock",
            description = "kubelet's PodResources API v1 socket. Default: ${DEFAULT-VALUE}")
    Path podResourcesSocket;

    @Option(names = "--resource-name", paramLabel = "NAME", defaultValue = HetgpuKeys.DEFAULT_RESOURCE_NAME,
            description = "Extended resource to advertise.%nDefault: ${DEFAULT-VALUE}")
    String resourceName;

    @Option(names = "--gpu-source", paramLabel = "SOURCE", defaultValue = GpuSources.NVML,
            description = "nvml, or simulated:<profile> (a shipped profile name or a profile file). Default: ${DEFAULT-VALUE}")
    String gpuSource;

    @Option(names = "--node-name", paramLabel = "NODE", defaultValue = "${env:NODE_NAME}",
            description = "This node's name (downward API). Default: $NODE_NAME")
    String nodeName;

    @Option(names = "--publish-node-inventory", paramLabel = "true|false", arity = "1", defaultValue = "true",
            description = "Write hetgpu.io labels and annotations on the Node; false runs without an API server. Default: ${DEFAULT-VALUE}")
    boolean publishNodeInventory;

    @Option(names = "--pod-resources-interval", paramLabel = "DURATION", defaultValue = "PT5S", converter = DurationConverter.class,
            description = "How often the free devices are read from kubelet (ISO-8601 or 5s, 1m). Default: 5s")
    Duration podResourcesInterval;

    @Option(names = "--device-list-strategy", paramLabel = "STRATEGY", split = ",", defaultValue = "envvar",
            converter = StrategyConverter.class,
            description = "How containers learn their GPUs: envvar (NVIDIA_VISIBLE_DEVICES) and/or cdi-cri (CDI names "
                    + "nvidia.com/gpu=<uuid>; needs a CDI spec with UUID names on the node). Default: ${DEFAULT-VALUE}")
    List<DeviceListStrategy> deviceListStrategies;

    @Option(names = "--tier-table", paramLabel = "FILE",
            // %n before a dotted name: help text wraps at 80 columns and would otherwise break it at its dot.
            description = "YAML/JSON file (version v1) whose policy.tiers list overrides or extends the card table behind the label%n"
                    + "hetgpu.io/gpu.tier (the scheduler extender's config file, so both rank cards alike). Default: the built-in table.")
    Path tierTable;

    @Option(names = "--health-skip-xids", paramLabel = "XIDS|all", converter = XidSelectionConverter.class,
            description = "XIDs that never mark a GPU unhealthy, besides the application faults of NVIDIA's catalogue "
                    + "(13, 31, 43, 45, 68, 109); all turns XID and ECC checks off. NVIDIA's DP_DISABLE_HEALTHCHECKS. Default: none")
    XidSelection healthSkipXids = XidSelection.NONE;

    @Option(names = "--health-critical-xids", paramLabel = "XIDS|all", converter = XidSelectionConverter.class,
            description = "XIDs that always mark a GPU unhealthy, even when skipped or catalogued as application faults; "
                    + "wins over --health-skip-xids. NVIDIA's DP_ENABLE_HEALTHCHECKS. Default: none")
    XidSelection healthCriticalXids = XidSelection.NONE;

    @Option(names = "--http-port", paramLabel = "PORT", defaultValue = "9445",
            description = "Port of /healthz and /metrics (Prometheus); 0 turns it off. Default: ${DEFAULT-VALUE}")
    int httpPort;

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line with hetgpu's error handling, for main and for tests. */
    static CommandLine commandLine() {
        return OneLineErrors.install(new CommandLine(new DevicePluginMain()), "hetgpu-device-plugin");
    }

    @Override
    public Integer call() throws Exception {
        // Every value first, then what one flag needs of another: a wrong value is the first thing to fix.
        validateValues();
        CardCatalog catalog;
        try {
            catalog = catalog();
        } catch (IOException e) {
            throw new CommandLine.ExecutionException(spec.commandLine(), e.getMessage(), e);
        }
        requireNodeNameWhenPublishing();
        if (kubeletApi == KubeletApi.DRA) {
            return runDra(catalog);
        }
        DevicePlugin plugin;
        KubernetesClient client = publishNodeInventory ? ApiServerTrust.connect() : null;
        try {
            // Simulated profiles derive their UUIDs from the node name; without one (no inventory published) the host name will do.
            var sourceNode = nodeName == null || nodeName.isBlank() ? hostName() : nodeName;
            var source = GpuSources.open(gpuSource, sourceNode, nvmlOptions());
            plugin = DevicePlugin.start(new DevicePlugin.Settings(devicePluginDir, podResourcesSocket, resourceName,
                    EnumSet.copyOf(deviceListStrategies), podResourcesInterval, httpPort, nodeName, catalog), source, Optional.ofNullable(client));
        } catch (GpuDiscoveryException | IOException e) {
            if (client != null) {
                client.close();
            }
            throw new CommandLine.ExecutionException(spec.commandLine(), e.getMessage(), e);
        }
        return runUntilStopped(plugin, client);
    }

    /** Runs until the JVM is told to stop, then closes the plugin and its API client (if any). */
    private static int runUntilStopped(AutoCloseable plugin, KubernetesClient client) throws InterruptedException {
        log.info("started {} ms after the JVM", System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime());
        var stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            log.info("Stopping (signal received)");
            try {
                plugin.close();
            } catch (Exception e) {
                log.warn("Error while stopping: {}", e.toString());
            }
            if (client != null) {
                client.close();
            }
            stopped.countDown();
        }, "shutdown"));
        stopped.await();
        return 0;
    }

    /** DRA mode: the DRA driver instead of the device plugin; it reads claims and publishes slices, so it needs the API server. */
    private int runDra(CardCatalog catalog) throws Exception {
        var client = ApiServerTrust.connect();
        DraPlugin plugin;
        try {
            var source = GpuSources.open(gpuSource, nodeName, nvmlOptions());
            plugin = DraPlugin.start(new DraPlugin.Settings(pluginRegistryDir, draPluginDir, cdiDir, driverName, nodeName, httpPort,
                    catalog), source, client);
        } catch (GpuDiscoveryException | IOException e) {
            client.close();
            throw new CommandLine.ExecutionException(spec.commandLine(), e.getMessage(), e);
        }
        return runUntilStopped(plugin, client);
    }

    /**
     * NVML health as the flags say. GPUs held until a reset or a reboot are remembered in a folder of their own
     * under kubelet's device-plugins folder (mounted read-write already): kubelet deletes the plain files there
     * when it starts, never folders.
     */
    NvmlOptions nvmlOptions() {
        var rules = new XidRules(XidCatalogue.nvidia(), healthSkipXids, healthCriticalXids);
        if (GpuSources.NVML.equals(gpuSource)) {
            log.info("GPU health: NVIDIA's XID catalogue; {}", rules);
        }
        // In DRA mode kubelet's device-plugin folder need not be mounted; the driver's own folder is.
        var marks = kubeletApi == KubeletApi.DRA ? draPluginDir.resolve(driverName).resolve(HEALTH_MARKS.getFileName())
                : devicePluginDir.resolve(HEALTH_MARKS);
        return NvmlOptions.defaults().withXidRules(rules).withStickyMarkFile(marks);
    }

    private void validateValues() {
        var resourceProblem = KubernetesNames.resourceNameProblem(resourceName);
        if (resourceProblem.isPresent()) {
            // The extender checks its resourceName by the same rule: a name one accepts, the other accepts too.
            throw new CommandLine.ParameterException(spec.commandLine(), "--resource-name: " + resourceProblem.get());
        }
        try {
            GpuSources.checkSpec(gpuSource);
        } catch (GpuDiscoveryException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        var driverProblem = driverNameProblem(driverName);
        if (driverProblem.isPresent()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--driver-name: " + driverProblem.get());
        }
        if (httpPort < 0 || httpPort > 65535) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--http-port must be 0..65535, got " + httpPort);
        }
        if (podResourcesInterval.isNegative() || podResourcesInterval.isZero()) {
            // As typed ("-5s"), not as parsed ("PT-5S").
            var typed = spec.findOption("--pod-resources-interval").originalStringValues();
            throw new CommandLine.ParameterException(spec.commandLine(), "--pod-resources-interval must be positive, got "
                    + (typed.isEmpty() ? podResourcesInterval : "\"" + typed.getLast() + "\""));
        }
    }

    /**
     * Why {@code name} cannot be a DRA driver's name, or empty when it can: a DNS subdomain of at most 63 characters
     * (resource.k8s.io's DriverNameMaxLength), as the API server checks a ResourceSlice's {@code spec.driver}.
     */
    static Optional<String> driverNameProblem(String name) {
        if (name == null || name.isEmpty() || name.length() > 63
                || !name.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")) {
            return Optional.of("expected a DNS subdomain of at most 63 characters (lower-case letters, digits, '-' and '.') "
                    + "such as gpu.hetgpu.io, got " + Quote.of(name));
        }
        return Optional.empty();
    }

    private void requireNodeNameWhenPublishing() {
        if (kubeletApi == KubeletApi.DRA) {
            if (!publishNodeInventory) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--kubelet-api dra reads ResourceClaims and "
                        + "publishes ResourceSlices through the API server: it cannot run with --publish-node-inventory false");
            }
            if (nodeName == null || nodeName.isBlank()) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--node-name (or NODE_NAME) is required with --kubelet-api dra (the node's pool is named after it)");
            }
            return;
        }
        if (publishNodeInventory && (nodeName == null || nodeName.isBlank())) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--node-name (or NODE_NAME) is required unless --publish-node-inventory false");
        }
    }

    private CardCatalog catalog() throws IOException {
        if (tierTable == null) {
            return CardCatalog.defaults();
        }
        try {
            return CardCatalog.defaults().withOverrides(TierTableFile.read(Files.readString(tierTable), tierTable.toString()));
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage());
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IOException("--tier-table: no such file " + tierTable);
        } catch (IOException e) {
            throw new IOException("--tier-table: " + tierTable + " cannot be read (" + (e.getMessage() == null ? e : e.getMessage()) + ")");
        }
    }

    private static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.net.UnknownHostException e) {
            return "localhost";
        }
    }

    static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            var text = value.strip().toLowerCase();
            try {
                if (text.startsWith("pt") || text.startsWith("p")) {
                    return Duration.parse(value.strip().toUpperCase());
                }
                if (text.endsWith("ms")) {
                    return Duration.ofMillis(Long.parseLong(text.substring(0, text.length() - 2)));
                }
                long amount = Long.parseLong(text.substring(0, text.length() - 1));
                return switch (text.charAt(text.length() - 1)) {
                    case 's' -> Duration.ofSeconds(amount);
                    case 'm' -> Duration.ofMinutes(amount);
                    case 'h' -> Duration.ofHours(amount);
                    default -> throw new NumberFormatException();
                };
            } catch (RuntimeException e) {
                throw new CommandLine.TypeConversionException("expected a duration such as 5s, 500ms, 1m or PT5S, got \"" + value + "\"");
            }
        }
    }

    static final class KubeletApiConverter implements CommandLine.ITypeConverter<KubeletApi> {
        @Override
        public KubeletApi convert(String value) {
            for (var api : KubeletApi.values()) {
                if (api.flag.equals(value.strip().toLowerCase(Locale.ROOT))) {
                    return api;
                }
            }
            throw new CommandLine.TypeConversionException("expected device-plugin or dra, got " + Quote.of(value));
        }
    }

    static final class XidSelectionConverter implements CommandLine.ITypeConverter<XidSelection> {
        @Override
        public XidSelection convert(String value) {
            try {
                return XidSelection.parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    static final class StrategyConverter implements CommandLine.ITypeConverter<DeviceListStrategy> {
        @Override
        public DeviceListStrategy convert(String value) {
            try {
                return DeviceListStrategy.parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

}
