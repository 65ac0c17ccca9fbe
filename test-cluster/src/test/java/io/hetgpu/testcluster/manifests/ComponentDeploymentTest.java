package io.hetgpu.testcluster.manifests;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.hetgpu.testcluster.manifests.ExpectedDeployment.DEVICE_PLUGIN;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.DEVICE_PLUGIN_HTTP_PORT;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.EXTENDER_CONTAINER;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.EXTENDER_METRICS_PORT;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.LOOPBACK;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.SCHEDULER;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.SCHEDULER_REPLICAS;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.KUBE_SCHEDULER_CONTAINER;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.EXTENDER_CONFIG_MAP;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.EXTENDER_PORT;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.GPU_NODE_LABEL;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.HEALTH_PATH;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.KUBELET_DEVICE_PLUGIN_DIR;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.KUBELET_POD_RESOURCES_DIR;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.KUBELET_POD_RESOURCES_SOCKET;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.READY_PATH;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.RESOURCE_NAME;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.SHIPPED_PROFILES;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.SIMULATED_PROFILE_LABEL;
import static io.hetgpu.testcluster.manifests.ManifestTree.ROOT;
import static io.hetgpu.testcluster.manifests.ManifestTree.SIMULATED_OVERLAY;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The device plugin DaemonSets, the extender as a container of hetgpu-scheduler's pods, and the limits of what RBAC lets
 * each do, as {@code kubectl kustomize} renders them. ({@link ManifestRbacTest} holds the rules to the
 * requests each program really makes.)
 */
class ComponentDeploymentTest {

    private static final Set<String> WRITE_VERBS = Set.of("create", "update", "patch", "delete", "deletecollection", "*");

    private final Rendering install = Kubectl.kustomize(ROOT);
    private final DaemonSet plugin = install.one(DaemonSet.class, DEVICE_PLUGIN);
    /** hetgpu-scheduler's pods: kube-scheduler and the extender side by side. */
    private final Deployment scheduler = install.one(Deployment.class, SCHEDULER);
    private final Container extender = PodTemplates.container(scheduler.getSpec().getTemplate(), EXTENDER_CONTAINER);

    // ---- device plugin -------------------------------------------------------------------------

    @Test
    void thePluginRegistersTheResourceWithTheKubeletPathsItMounts() {
        PodTemplateSpec template = plugin.getSpec().getTemplate();
        Container container = PodTemplates.onlyContainer(template);
        Map<String, String> flags = PodTemplates.flags(container);

        assertThat(flags).containsEntry("gpu-source", "nvml")
                .containsEntry("resource-name", RESOURCE_NAME)
                .containsEntry("node-name", "$(NODE_NAME)")
                .containsEntry("publish-node-inventory", "true")
                .containsEntry("http-port", String.valueOf(DEVICE_PLUGIN_HTTP_PORT))
                .containsEntry("device-plugin-dir", KUBELET_DEVICE_PLUGIN_DIR)
                .containsEntry("pod-resources-socket", KUBELET_POD_RESOURCES_SOCKET);
        assertKubeletFoldersMounted(template);
    }

    @Test
    void thePluginRanksCardsFromTheExtendersConfigMap() {
        var template = plugin.getSpec().getTemplate();
        var file = Path.of(PodTemplates.flags(PodTemplates.onlyContainer(template)).get("tier-table"));
        var mount = PodTemplates.onlyContainer(template).getVolumeMounts().stream()
                .filter(m -> file.startsWith(m.getMountPath())).findFirst().orElseThrow();
        var volume = template.getSpec().getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();

        assertThat(volume.getConfigMap().getName()).isEqualTo(EXTENDER_CONFIG_MAP);
        assertThat(install.one(ConfigMap.class, EXTENDER_CONFIG_MAP).getData()).containsKey(file.getFileName().toString());
    }

    @Test
    void thePluginLearnsItsNodeFromTheDownwardApi() {
        EnvVar nodeName = PodTemplates.onlyContainer(plugin.getSpec().getTemplate()).getEnv().stream()
                .filter(e -> e.getName().equals("NODE_NAME")).findFirst().orElseThrow();
        assertThat(nodeName.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("spec.nodeName");
    }

    @Test
    void thePluginRunsOnTaintedGpuNodesAsNodeCritical() {
        var spec = plugin.getSpec().getTemplate().getSpec();
        assertThat(spec.getPriorityClassName()).isEqualTo("system-node-critical");
        assertThat(spec.getTolerations()).anySatisfy(t -> {
            assertThat(t.getKey()).isEqualTo("nvidia.com/gpu");
            assertThat(t.getOperator()).isEqualTo("Exists");
            assertThat(t.getEffect()).isEqualTo("NoSchedule");
        });
    }

    /**
     * Only the nodes the admin labels for hetgpu: a term on nvidia.com/gpu.present (GPU Feature
     * Discovery labels every GPU node) would start this plugin beside NVIDIA's on GPU Operator clusters.
     */
    @Test
    void thePluginRunsOnlyOnNodesLabelledForHetgpu() {
        var spec = plugin.getSpec().getTemplate().getSpec();
        assertThat(spec.getNodeSelector()).containsExactly(Map.entry(GPU_NODE_LABEL, "true"));
        assertThat(spec.getAffinity() == null ? null : spec.getAffinity().getNodeAffinity()).isNull();
    }

    @Test
    void thePluginHasNoPrivilegeBeyondRootOwnership() {
        var template = plugin.getSpec().getTemplate();
        assertPowerless(PodTemplates.onlyContainer(template).getSecurityContext());
        assertThat(template.getSpec().getHostNetwork()).isNotEqualTo(Boolean.TRUE);
        assertThat(template.getSpec().getHostPID()).isNotEqualTo(Boolean.TRUE);
        // NVML comes through the NVIDIA runtime, for the NVML ("utility") capability only.
        assertThat(template.getSpec().getRuntimeClassName()).isEqualTo("nvidia");
        assertThat(env(PodTemplates.onlyContainer(template))).containsEntry("NVIDIA_DRIVER_CAPABILITIES", "utility");
    }

    @Test
    void thePluginIsProbedOnItsHealthPort() {
        Container container = PodTemplates.onlyContainer(plugin.getSpec().getTemplate());
        assertProbe(container, container.getLivenessProbe(), HEALTH_PATH, DEVICE_PLUGIN_HTTP_PORT);
    }

    @Test
    void theSimulatedOverlayRunsOneDaemonSetPerShippedProfileOnItsLabelledNodes() {
        List<DaemonSet> simulated = Kubectl.kustomize(SIMULATED_OVERLAY).all(DaemonSet.class).stream()
                .filter(d -> d.getMetadata().getLabels().containsKey(SIMULATED_PROFILE_LABEL)).toList();
        assertThat(simulated).extracting(d -> d.getSpec().getTemplate().getSpec().getNodeSelector().get(SIMULATED_PROFILE_LABEL))
                .containsExactlyInAnyOrderElementsOf(SHIPPED_PROFILES);

        Map<String, String> nvmlFlags = PodTemplates.flags(PodTemplates.onlyContainer(plugin.getSpec().getTemplate()));
        for (DaemonSet daemonSet : simulated) {
            PodTemplateSpec template = daemonSet.getSpec().getTemplate();
            String profile = template.getSpec().getNodeSelector().get(SIMULATED_PROFILE_LABEL);
            Container container = PodTemplates.onlyContainer(template);
            Map<String, String> flags = PodTemplates.flags(container);

            assertThat(flags.get("gpu-source")).as(profile).isEqualTo("simulated:" + profile);
            flags.remove("gpu-source");
            var expected = new java.util.LinkedHashMap<>(nvmlFlags);
            expected.remove("gpu-source");
            assertThat(flags).as(profile).isEqualTo(expected);
            assertThat(daemonSet.getSpec().getSelector().getMatchLabels()).as(profile)
                    .containsEntry(SIMULATED_PROFILE_LABEL, profile);
            assertThat(template.getMetadata().getLabels()).containsAllEntriesOf(daemonSet.getSpec().getSelector().getMatchLabels());
            // No GPU driver involved.
            assertThat(template.getSpec().getRuntimeClassName()).as(profile).isNull();
            assertThat(env(container).keySet()).as(profile).noneMatch(name -> name.startsWith("NVIDIA_"));
            assertThat(template.getSpec().getServiceAccountName()).isEqualTo(plugin.getSpec().getTemplate().getSpec().getServiceAccountName());
            assertPowerless(container.getSecurityContext());
            assertKubeletFoldersMounted(template);
        }
    }

    /**
     * Whatever the code comes to request: the plugin patches its Node, reads the pods bound to it (the bind handshake's
     * assignments) and creates Events (a GpuAssignmentMismatch); it never writes pods, never deletes anything.
     */
    @Test
    void thePluginTouchesItsNodeReadsPodsAndCreatesOnlyEvents() {
        List<PolicyRule> rules = rulesOf(plugin.getSpec().getTemplate().getSpec().getServiceAccountName());
        assertThat(rules).isNotEmpty().allSatisfy(rule -> {
            assertThat(rule.getApiGroups()).containsExactly("");
            assertThat(rule.getResources()).isSubsetOf("nodes", "pods", "events");
            assertThat(rule.getVerbs()).doesNotContain("*", "delete", "deletecollection");
            if (rule.getResources().contains("pods")) {
                assertThat(rule.getVerbs()).as("pods are only read").isSubsetOf("get", "list", "watch");
            }
            if (rule.getVerbs().contains("create")) {
                assertThat(rule.getResources()).as("only Events are created").containsExactly("events");
            }
        });
    }

    // ---- scheduler extender --------------------------------------------------------------------

    @Test
    void eachSchedulerPodRunsItsOwnExtenderWhoseVerbsListenOnLoopbackOnly() {
        assertThat(scheduler.getSpec().getReplicas()).isEqualTo(SCHEDULER_REPLICAS);
        var template = scheduler.getSpec().getTemplate();
        assertThat(template.getSpec().getContainers()).extracting(Container::getName)
                .containsExactlyInAnyOrder(KUBE_SCHEDULER_CONTAINER, EXTENDER_CONTAINER);
        assertThat(PodTemplates.flags(extender)).containsEntry("host", LOOPBACK).containsEntry("port", String.valueOf(EXTENDER_PORT))
                .containsEntry("metrics-port", String.valueOf(EXTENDER_METRICS_PORT));
        // Nothing outside the pod is pointed at the verbs: the one Service reaches the metrics port, the only declared port.
        assertThat(install.servicePortsReaching(template)).containsExactly("hetgpu-scheduler-metrics:metrics");
        assertThat(extender.getPorts()).extracting(ContainerPort::getContainerPort).containsExactly(EXTENDER_METRICS_PORT);
        // Voluntary disruptions keep one scheduler, and so one extender, running.
        var budget = install.one(io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget.class, SCHEDULER);
        assertThat(template.getMetadata().getLabels()).containsAllEntriesOf(budget.getSpec().getSelector().getMatchLabels());
        assertThat(budget.getSpec().getMinAvailable().getIntVal()).isEqualTo(1);
    }

    @Test
    void theExtenderRunsAsNonRootOnAReadOnlyRootFilesystem() {
        var spec = scheduler.getSpec().getTemplate().getSpec();
        var pod = spec.getSecurityContext();
        var own = extender.getSecurityContext();
        assertThat(own.getRunAsNonRoot() != null ? own.getRunAsNonRoot() : pod.getRunAsNonRoot()).isTrue();
        Long uid = own.getRunAsUser() != null ? own.getRunAsUser() : pod.getRunAsUser();
        assertThat(uid).isNotNull().isNotZero();
        assertThat(own.getReadOnlyRootFilesystem()).isTrue();
        assertThat(own.getAllowPrivilegeEscalation()).isFalse();
        assertThat(own.getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(extender.getResources().getRequests()).containsKeys("cpu", "memory");
        assertThat(extender.getResources().getLimits()).containsKey("memory");
    }

    @Test
    void theExtenderIsProbedAndScrapedOnItsMetricsPort() {
        assertProbe(extender, extender.getReadinessProbe(), READY_PATH, EXTENDER_METRICS_PORT);
        assertProbe(extender, extender.getLivenessProbe(), HEALTH_PATH, EXTENDER_METRICS_PORT);
        assertThat(PodTemplates.annotations(scheduler.getSpec().getTemplate()))
                .containsEntry("prometheus.io/scrape", "true")
                .containsEntry("prometheus.io/port", String.valueOf(EXTENDER_METRICS_PORT))
                .containsEntry("prometheus.io/path", "/metrics");
    }

    @Test
    void theExtenderConfigurationMatchesItsPortThePluginsResourceTheSchedulerAndIsMounted() throws Exception {
        Path config = Path.of(PodTemplates.flags(extender).get("config"));
        VolumeMount mount = extender.getVolumeMounts().stream()
                .filter(m -> Path.of(m.getMountPath()).equals(config.getParent())).findFirst().orElseThrow();
        Volume volume = scheduler.getSpec().getTemplate().getSpec().getVolumes().stream()
                .filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
        assertThat(volume.getConfigMap().getName()).isEqualTo(EXTENDER_CONFIG_MAP);

        ConfigMap configMap = install.one(ConfigMap.class, EXTENDER_CONFIG_MAP);
        // The extender's own strict reader: an unknown or misspelled key fails here, not in the cluster.
        var settings = io.hetgpu.extender.ExtenderConfig.parse(configMap.getData().get(config.getFileName().toString()), EXTENDER_CONFIG_MAP);
        assertThat(settings.port()).isEqualTo(EXTENDER_PORT);
        String pluginResource = PodTemplates.flags(PodTemplates.onlyContainer(plugin.getSpec().getTemplate())).get("resource-name");
        assertThat(settings.resourceName()).isEqualTo(pluginResource);
        // The bind verb binds the pods of the profile this scheduler runs, and nothing else.
        assertThat(settings.schedulerNames()).containsExactly(ExpectedDeployment.SCHEDULER_NAME);
    }

    /**
     * Whatever the code comes to request: the extender writes Events, and for the bind handshake its record on a pod
     * (patch) and the pod's Binding (pods/binding), creates the Secret of the key its records are signed with (read
     * back by that name only), and keeps what it learned in one ConfigMap (read and updated by that name only).
     * Eviction stays kube-scheduler's, nodes are never written.
     */
    @Test
    void theExtenderWritesOnlyEventsItsBindRecordAndBindings() {
        // The pod's one service account also holds kube-scheduler's own roles (built in, not rendered here):
        // what hetgpu's manifests add to it is what is checked.
        List<PolicyRule> rules = rulesOf(scheduler.getSpec().getTemplate().getSpec().getServiceAccountName()).stream()
                .filter(rule -> !rule.getApiGroups().equals(List.of("coordination.k8s.io"))).toList();
        assertThat(rules).isNotEmpty();
        for (PolicyRule rule : rules) {
            boolean writes = rule.getVerbs().stream().anyMatch(WRITE_VERBS::contains);
            if (writes) {
                assertThat(rule.getResources()).as("written resources").isSubsetOf("events", "pods", "pods/binding", "secrets", "configmaps");
            }
            if (rule.getResources().contains("configmaps")) {
                assertThat(rule.getVerbs().equals(List.of("create"))
                        || rule.getResourceNames().equals(List.of("hetgpu-throughputs")) && !rule.getVerbs().contains("delete")
                                && !rule.getVerbs().contains("list") && !rule.getVerbs().contains("watch"))
                        .as("the learned throughputs' ConfigMap is created, and read and updated by its name only: %s", rule).isTrue();
            }
            if (rule.getResources().contains("secrets")) {
                assertThat(rule.getVerbs().equals(List.of("create"))
                        || rule.getVerbs().equals(List.of("get")) && rule.getResourceNames().equals(List.of("hetgpu-record-key")))
                        .as("the record key's Secret is created, and read by its name only: %s", rule).isTrue();
            }
            if (rule.getResources().contains("pods") && writes) {
                assertThat(rule.getVerbs()).as("pods are patched (the device record), never created, updated or deleted")
                        .doesNotContain("create", "update", "delete", "deletecollection");
            }
            assertThat(rule.getResources()).doesNotContain("*", "nodes/status", "bindings", "pods/eviction");
        }
    }

    // ---- shared assertions ---------------------------------------------------------------------

    private List<PolicyRule> rulesOf(String serviceAccount) {
        return install.grantsOf(ExpectedDeployment.NAMESPACE, serviceAccount).stream().map(Rendering.Grant::rule).toList();
    }

    private static void assertKubeletFoldersMounted(PodTemplateSpec template) {
        Container container = PodTemplates.onlyContainer(template);
        for (String folder : List.of(KUBELET_DEVICE_PLUGIN_DIR, KUBELET_POD_RESOURCES_DIR)) {
            VolumeMount mount = container.getVolumeMounts().stream()
                    .filter(m -> m.getMountPath().equals(folder)).findFirst()
                    .orElseThrow(() -> new AssertionError("not mounted: " + folder));
            Volume volume = template.getSpec().getVolumes().stream()
                    .filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
            assertThat(volume.getHostPath().getPath()).isEqualTo(folder);
        }
        // The plugin creates its socket in the device-plugin folder.
        assertThat(container.getVolumeMounts()).filteredOn(m -> m.getMountPath().equals(KUBELET_DEVICE_PLUGIN_DIR))
                .allSatisfy(m -> assertThat(m.getReadOnly()).isNotEqualTo(Boolean.TRUE));
        // No other host path: the driver comes through the container runtime, not from the host.
        assertThat(template.getSpec().getVolumes()).filteredOn(v -> v.getHostPath() != null)
                .extracting(v -> v.getHostPath().getPath())
                .containsExactlyInAnyOrder(KUBELET_DEVICE_PLUGIN_DIR, KUBELET_POD_RESOURCES_DIR);
    }

    private static void assertPowerless(SecurityContext context) {
        assertThat(context.getPrivileged()).isNotEqualTo(Boolean.TRUE);
        assertThat(context.getAllowPrivilegeEscalation()).isFalse();
        assertThat(context.getReadOnlyRootFilesystem()).isTrue();
        assertThat(context.getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(context.getCapabilities().getAdd()).isNullOrEmpty();
    }

    private static void assertProbe(Container container, Probe probe, String path, int port) {
        assertThat(probe).isNotNull();
        assertThat(probe.getHttpGet().getPath()).isEqualTo(path);
        var target = probe.getHttpGet().getPort();
        assertThat(containerPort(container, target.getIntVal(), target.getStrVal())).isEqualTo(port);
    }

    /** The container port a Service targetPort or probe port refers to, by number or by name. */
    private static int containerPort(Container container, Integer number, String name) {
        if (number != null) {
            assertThat(container.getPorts()).extracting(ContainerPort::getContainerPort).contains(number);
            return number;
        }
        return container.getPorts().stream().filter(p -> name.equals(p.getName()))
                .findFirst().orElseThrow(() -> new AssertionError("no container port named " + name))
                .getContainerPort();
    }

    private static Map<String, String> env(Container container) {
        var env = new java.util.HashMap<String, String>();
        container.getEnv().forEach(e -> env.put(e.getName(), e.getValue()));
        return env;
    }
}
