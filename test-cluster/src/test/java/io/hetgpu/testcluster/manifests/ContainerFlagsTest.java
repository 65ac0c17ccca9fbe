package io.hetgpu.testcluster.manifests;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.hetgpu.extender.ExtenderConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static io.hetgpu.testcluster.manifests.ExpectedDeployment.DEVICE_PLUGIN_HTTP_PORT;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.EXTENDER_PORT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every hetgpu container of every rendered install, run through its own program's parser: the flags
 * it is given must be accepted, and the ports it declares must be the ones the program then listens on.
 */
class ContainerFlagsTest {

    /** What the downward API would give the containers' fieldRef env vars. */
    private static final Map<String, String> FIELDS = Map.of(
            "spec.nodeName", "gpu-node-7", "metadata.name", "pod-0", "metadata.namespace", ExpectedDeployment.NAMESPACE);
    /** kube-scheduler's secure port when no --secure-port is given. */
    private static final int KUBE_SCHEDULER_SECURE_PORT = 10259;
    private static final Pattern EXPOSE = Pattern.compile("(?m)^EXPOSE\\s+(\\d+)\\s*$");

    static List<Path> installs() {
        return KustomizationsTest.installs();
    }

    /**
     * hetgpu's DRA driver as shipped: the DRA overlay and the chart with {@code devicePlugin.kubeletApi: dra} (NVML, and
     * simulated machines), by name.
     */
    static Stream<Arguments> draInstalls() {
        return Stream.of(Arguments.of("manifests/overlays/dra"), Arguments.of(CHART + "devicePlugin: {kubeletApi: dra}"),
                Arguments.of(CHART + "devicePlugin: {kubeletApi: dra, simulatedProfiles: [dgx-a100]}"));
    }

    private static final String CHART = "chart with ";

    private static Rendering draInstall(String name) {
        return name.startsWith(CHART) ? HelmChart.render("1.37.1", name.substring(CHART.length())) : Kubectl.kustomize(ManifestTree.DRA_OVERLAY);
    }

    @ParameterizedTest
    @MethodSource("installs")
    void everyHetgpuContainerIsAcceptedByItsProgramsParser(Path folder) {
        everyHetgpuContainerIsAccepted(folder.toString(), Kubectl.kustomize(folder));
    }

    @ParameterizedTest
    @MethodSource("draInstalls")
    void everyHetgpuContainerOfTheDraDriverIsAcceptedByItsProgramsParser(String install) {
        var rendering = draInstall(install);
        everyHetgpuContainerIsAccepted(install, rendering);
        for (var running : rendering.running(ImageSetting.of(Program.DEVICE_PLUGIN).repository())) {
            var parsed = Program.DEVICE_PLUGIN.parse(Program.expandedArgs(running.container(), FIELDS));
            assertThat(Program.value(parsed, "--kubelet-api")).as(install + " " + running.describe()).isEqualToIgnoringCase("dra");
        }
        everyContainerDeclaresThePortItsProgramListensOn(install, rendering);
    }

    private static void everyHetgpuContainerIsAccepted(String folder, Rendering rendering) {
        for (Program program : Program.values()) {
            var running = rendering.running(ImageSetting.of(program).repository());
            assertThat(running).as("%s runs %s", folder, program).isNotEmpty();
            for (var container : running) {
                // A command replaces the image's entrypoint: only the DRA driver's, which names its own AOT cache and
                // runs the image's jar as the entrypoint does (ShippedJarContentsTest holds it to the ENTRYPOINT), so the
                // arguments still reach the program.
                var command = container.container().getCommand();
                if (command != null && !command.isEmpty()) {
                    assertThat(command).as(container.describe()).contains("-XX:AOTCache=/opt/hetgpu/hetgpu-dra.aot")
                            .startsWith("java").endsWith("-jar", "/opt/hetgpu/hetgpu-device-plugin.jar");
                }
                List<String> args = Program.expandedArgs(container.container(), FIELDS);
                assertThat(args).as(container.describe() + " after kubelet's $(VAR) expansion")
                        .noneMatch(arg -> arg.contains("$("));
                try {
                    program.parse(args);
                } catch (CommandLine.ParameterException e) {
                    throw new AssertionError(folder + " " + container.describe() + ": " + program + " rejects " + args + ": "
                            + e.getMessage(), e);
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("installs")
    void everyContainerDeclaresExactlyThePortItsProgramListensOn(Path folder) {
        Rendering rendering = Kubectl.kustomize(folder);
        everyContainerDeclaresThePortItsProgramListensOn(folder.toString(), rendering);
        var schedulers = rendering.running(Rendering.repository(ExpectedDeployment.KUBE_SCHEDULER_IMAGE));
        assertThat(schedulers).isNotEmpty().allSatisfy(running -> {
            var flags = PodTemplates.flags(running.container());
            int secure = Integer.parseInt(flags.getOrDefault("secure-port", Integer.toString(KUBE_SCHEDULER_SECURE_PORT)));
            assertThat(running.container().getPorts()).extracting(ContainerPort::getContainerPort).containsExactly(secure);
        });
    }

    private static void everyContainerDeclaresThePortItsProgramListensOn(String folder, Rendering rendering) {
        for (Program program : Program.values()) {
            for (var running : rendering.running(ImageSetting.of(program).repository())) {
                int listening = listeningPort(rendering, program, running);
                assertThat(running.container().getPorts()).as(folder + " " + running.describe())
                        .extracting(ContainerPort::getContainerPort).containsExactly(listening);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("installs")
    void everyProbeAndServiceTargetsADeclaredContainerPort(Path folder) {
        Rendering rendering = Kubectl.kustomize(folder);
        for (var workload : rendering.workloads()) {
            for (Container container : workload.template().getSpec().getContainers()) {
                for (Probe probe : new Probe[] {container.getLivenessProbe(), container.getReadinessProbe(), container.getStartupProbe()}) {
                    if (probe != null && probe.getHttpGet() != null) {
                        declaredPort(container, probe.getHttpGet().getPort(), workload.describe());
                    }
                }
            }
        }
        for (Service service : rendering.all(Service.class)) {
            var selected = rendering.workloads().stream()
                    .filter(w -> w.template().getMetadata().getLabels().entrySet().containsAll(service.getSpec().getSelector().entrySet()))
                    .toList();
            assertThat(selected).as("pods of Service " + service.getMetadata().getName()).isNotEmpty();
            for (var port : service.getSpec().getPorts()) {
                for (var workload : selected) {
                    // A pod of several containers (kube-scheduler and the extender): the port is one of theirs.
                    var where = "Service " + service.getMetadata().getName() + " -> " + workload.describe();
                    assertThat(workload.template().getSpec().getContainers()).as(where).anySatisfy(container ->
                            declaredPort(container, port.getTargetPort(), where));
                }
            }
        }
    }

    /** The Dockerfiles' EXPOSE is documentation only, but it should not tell a different story. */
    @Test
    void theDockerfilesExposeThePortsTheirProgramsListenOn() throws IOException {
        assertThat(exposed(Path.of("..", "device-plugin", "Dockerfile"))).containsExactly(DEVICE_PLUGIN_HTTP_PORT);
        // The extender's verbs listen on loopback in the shipped layout: the image exposes its metrics port.
        assertThat(exposed(Path.of("..", "scheduler-extender", "Dockerfile"))).containsExactly(ExpectedDeployment.EXTENDER_METRICS_PORT);
        assertThat(ExtenderConfig.DEFAULTS.port()).isEqualTo(EXTENDER_PORT);
    }

    /** The status port is the plugin's own default, so the manifests, the image and a bare `java -jar` all agree. */
    @Test
    void theDeployedPluginServesStatusOnItsDefaultPort() {
        Rendering install = Kubectl.kustomize(ManifestTree.ROOT);
        for (var running : install.running(ImageSetting.of(Program.DEVICE_PLUGIN).repository())) {
            assertThat(listeningPort(install, Program.DEVICE_PLUGIN, running)).isEqualTo(DEVICE_PLUGIN_HTTP_PORT);
        }
    }

    /**
     * The port the program in {@code running} can be reached on from outside its pod, as its parser (and, for the
     * extender, its config reader) make it out: the plugin's status port, the extender's metrics port (its verbs
     * listen on loopback, see {@link #verbsAddress}).
     */
    static int listeningPort(Rendering rendering, Program program, Rendering.Running running) {
        var parsed = program.parse(Program.expandedArgs(running.container(), FIELDS));
        return switch (program) {
            case DEVICE_PLUGIN -> Integer.parseInt(Program.value(parsed, "--http-port"));
            case SCHEDULER_EXTENDER -> {
                String port = Program.value(parsed, "--metrics-port");
                int metrics = port != null ? Integer.parseInt(port) : extenderConfig(rendering, running, parsed).metricsPort();
                assertThat(metrics).as(running.describe() + " serves its metrics and probes on a port of their own").isPositive();
                yield metrics;
            }
        };
    }

    /** Where the extender in {@code running} serves its verbs. */
    record Address(String host, int port) {
    }

    static Address verbsAddress(Rendering rendering, Rendering.Running running) {
        var parsed = Program.SCHEDULER_EXTENDER.parse(Program.expandedArgs(running.container(), FIELDS));
        String port = Program.value(parsed, "--port");
        String host = Program.value(parsed, "--host");
        return new Address(host == null ? "0.0.0.0" : host,
                port != null ? Integer.parseInt(port) : extenderConfig(rendering, running, parsed).port());
    }

    private static ExtenderConfig extenderConfig(Rendering rendering, Rendering.Running running, picocli.CommandLine.ParseResult parsed) {
        String config = Program.value(parsed, "--config");
        if (config == null) {
            return ExtenderConfig.DEFAULTS;
        }
        try {
            return ExtenderConfig.parse(mountedFile(rendering, running, Path.of(config)), config);
        } catch (ExtenderConfig.ConfigException e) {
            throw new AssertionError(running.describe() + ": " + e.getMessage(), e);
        }
    }

    /** The text a container sees at {@code file}, from the rendered ConfigMap mounted over its folder. */
    static String mountedFile(Rendering rendering, Rendering.Running running, Path file) {
        var mount = running.container().getVolumeMounts().stream()
                .filter(m -> file.startsWith(m.getMountPath()))
                .findFirst().orElseThrow(() -> new AssertionError(running.describe() + " mounts nothing over " + file));
        Volume volume = running.workload().template().getSpec().getVolumes().stream()
                .filter(v -> v.getName().equals(mount.getName())).findFirst()
                .orElseThrow(() -> new AssertionError(running.describe() + " has no volume " + mount.getName()));
        assertThat(volume.getConfigMap()).as(running.describe() + " volume " + volume.getName()).isNotNull();
        assertThat(volume.getConfigMap().getItems()).as("items remap keys; this test reads keys as file names").isNullOrEmpty();
        String key = Path.of(mount.getMountPath()).relativize(file).toString();
        ConfigMap configMap = rendering.one(ConfigMap.class, volume.getConfigMap().getName());
        String text = configMap.getData().get(key);
        assertThat(text).as(running.describe() + ": key " + key + " of ConfigMap " + configMap.getMetadata().getName()).isNotNull();
        return text;
    }

    private static int declaredPort(Container container, IntOrString port, String where) {
        if (port.getIntVal() != null) {
            assertThat(container.getPorts()).as(where).extracting(ContainerPort::getContainerPort).contains(port.getIntVal());
            return port.getIntVal();
        }
        return container.getPorts().stream().filter(p -> port.getStrVal().equals(p.getName())).findFirst()
                .orElseThrow(() -> new AssertionError(where + ": no container port named " + port.getStrVal()))
                .getContainerPort();
    }

    private static List<Integer> exposed(Path dockerfile) throws IOException {
        var ports = new ArrayList<Integer>();
        var matcher = EXPOSE.matcher(Files.readString(dockerfile));
        while (matcher.find()) {
            ports.add(Integer.parseInt(matcher.group(1)));
        }
        return ports;
    }
}
