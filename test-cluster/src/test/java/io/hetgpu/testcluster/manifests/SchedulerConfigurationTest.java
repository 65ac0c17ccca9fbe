package io.hetgpu.testcluster.manifests;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.scheduler.SchedulerSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static io.hetgpu.testcluster.manifests.ExpectedDeployment.DEVICE_PLUGIN;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.EXTENDER_CONTAINER;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.KUBE_SCHEDULER_CONTAINER;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.LOOPBACK;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.EXTENDER_PORT;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.FILTER_VERB;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.KUBE_SCHEDULER_CONFIG_API;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.KUBE_SCHEDULER_IMAGE;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.NAMESPACE;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.PREEMPT_VERB;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.BIND_VERB;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.PRIORITIZE_VERB;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.RESOURCE_NAME;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.SCHEDULER_CONFIG_KEY;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.SCHEDULER_CONFIG_MAP;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.SCHEDULER_NAME;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The KubeSchedulerConfiguration that hetgpu-scheduler runs: it must reach the extender of its own pod,
 * on loopback, with the verbs the extender serves, and use only field names that kube-scheduler's strict
 * decoder accepts (k8s.io/kube-scheduler/config/v1).
 */
class SchedulerConfigurationTest {

    /** json tags of KubeSchedulerConfiguration, KubeSchedulerProfile, Extender and LeaderElectionConfiguration. */
    private static final Set<String> CONFIGURATION_FIELDS = Set.of("apiVersion", "kind", "parallelism",
            "leaderElection", "clientConnection", "enableProfiling", "enableContentionProfiling",
            "percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles",
            "extenders", "delayCacheUntilActive");
    private static final Set<String> PROFILE_FIELDS = Set.of("schedulerName", "percentageOfNodesToScore",
            "plugins", "pluginConfig");
    private static final Set<String> EXTENDER_FIELDS = Set.of("urlPrefix", "filterVerb", "preemptVerb",
            "prioritizeVerb", "weight", "bindVerb", "enableHTTPS", "tlsConfig", "httpTimeout", "nodeCacheCapable",
            "managedResources", "ignorable");
    private static final Set<String> LEADER_ELECTION_FIELDS = Set.of("leaderElect", "leaseDuration",
            "renewDeadline", "retryPeriod", "resourceLock", "resourceName", "resourceNamespace");

    private final Rendering install = Kubectl.kustomize(ManifestTree.ROOT);
    private final JsonNode configuration = ManifestTree.yaml(
            install.one(ConfigMap.class, SCHEDULER_CONFIG_MAP).getData().get(SCHEDULER_CONFIG_KEY));
    private final JsonNode extender = onlyExtender();

    private JsonNode onlyExtender() {
        assertThat(configuration.path("extenders")).hasSize(1);
        return configuration.path("extenders").get(0);
    }

    /**
     * The test cluster (demo, end-to-end tests, simulator equality) reads base/'s files without kubectl;
     * what it reads must be what every install deploys.
     */
    @ParameterizedTest
    @MethodSource("io.hetgpu.testcluster.manifests.KustomizationsTest#installs")
    void theTestClusterRunsTheConfigurationEveryInstallDeploys(Path folder) throws Exception {
        Rendering rendering = Kubectl.kustomize(folder);
        var deployed = DeployedConfiguration.load(ManifestTree.ROOT);
        String extenderYaml = rendering.one(ConfigMap.class, ExpectedDeployment.EXTENDER_CONFIG_MAP).getData()
                .get(DeployedConfiguration.EXTENDER_CONFIG_KEY);
        assertThat(deployed.extender()).isEqualTo(ExtenderConfig.parse(extenderYaml, folder.toString()));
        assertThat(deployed.scheduler()).isEqualTo(SchedulerSettings.parse(
                rendering.one(ConfigMap.class, SCHEDULER_CONFIG_MAP).getData().get(SCHEDULER_CONFIG_KEY)));
    }

    @Test
    void usesOnlyFieldNamesOfTheV1Api() {
        assertThat(configuration.path("apiVersion").asText()).isEqualTo(KUBE_SCHEDULER_CONFIG_API);
        assertThat(configuration.path("kind").asText()).isEqualTo("KubeSchedulerConfiguration");
        assertThat(configuration.fieldNames()).toIterable().isSubsetOf(CONFIGURATION_FIELDS);
        assertThat(configuration.path("leaderElection").fieldNames()).toIterable().isSubsetOf(LEADER_ELECTION_FIELDS);
        configuration.path("profiles").forEach(p -> assertThat(p.fieldNames()).toIterable().isSubsetOf(PROFILE_FIELDS));
        assertThat(extender.fieldNames()).toIterable().isSubsetOf(EXTENDER_FIELDS);
    }

    @Test
    void theProfileIsHetgpuSchedulerAndScoresEveryFeasibleNode() {
        assertThat(configuration.path("profiles")).hasSize(1);
        JsonNode profile = configuration.path("profiles").get(0);
        assertThat(profile.path("schedulerName").asText()).isEqualTo(SCHEDULER_NAME);
        assertThat(profile.path("percentageOfNodesToScore").asInt()).isEqualTo(100);
    }

    /** In every rendering a user applies, not only the default one: an overlay could move the extender out of the pod. */
    @ParameterizedTest
    @MethodSource("io.hetgpu.testcluster.manifests.KustomizationsTest#installs")
    void theExtenderUrlOfEveryInstallIsTheLoopbackAddressAndPortOfTheExtenderInTheSchedulersPod(Path folder) {
        Rendering rendering = Kubectl.kustomize(folder);
        JsonNode config = ManifestTree.yaml(rendering.one(ConfigMap.class, SCHEDULER_CONFIG_MAP).getData().get(SCHEDULER_CONFIG_KEY));
        URI url = URI.create(config.path("extenders").get(0).path("urlPrefix").asText());
        Deployment scheduler = rendering.one(Deployment.class, SCHEDULER_NAME);
        // kube-scheduler reads the file this ConfigMap is mounted as; the extender it calls is its pod's own.
        PodTemplates.container(scheduler.getSpec().getTemplate(), KUBE_SCHEDULER_CONTAINER);
        Container container = PodTemplates.container(scheduler.getSpec().getTemplate(), EXTENDER_CONTAINER);
        var running = new Rendering.Running(new Rendering.Workload(scheduler, scheduler.getSpec().getTemplate()), container);
        // The address the extender's verbs listen on, as its own parser and config reader make it out.
        var verbs = ContainerFlagsTest.verbsAddress(rendering, running);
        assertThat(url.getHost()).as(url.toString()).isEqualTo(LOOPBACK).isEqualTo(verbs.host());
        assertThat(url.getPort()).as(url.toString()).isEqualTo(verbs.port());
        // No Service leads to the verbs (its pods would have to listen beyond loopback): only to the metrics port.
        assertThat(rendering.servicePortsReaching(scheduler.getSpec().getTemplate())).allSatisfy(port -> assertThat(port).endsWith(":metrics"));
    }

    @Test
    void theExtenderUrlIsPlainHttpOnTheExtendersPortWithoutAPath() {
        URI url = URI.create(extender.path("urlPrefix").asText());
        assertThat(url.getScheme()).isEqualTo(extender.path("enableHTTPS").asBoolean() ? "https" : "http");
        assertThat(url.getScheme()).as("loopback inside one pod needs no TLS").isEqualTo("http");
        assertThat(url.getHost()).isEqualTo(LOOPBACK);
        assertThat(url.getPort()).isEqualTo(EXTENDER_PORT);
        assertThat(url.getPath()).isEmpty();
    }

    /** A bind the extender would carry on with after kube-scheduler gave up on it would be a bind nobody asked for. */
    @Test
    void theExtenderBindsWithinTheSchedulersTimeoutAndOnlyForItsProfile() throws Exception {
        var settings = DeployedConfiguration.load(ManifestTree.ROOT).extender();
        assertThat(settings.httpTimeout()).isEqualTo(java.time.Duration.ofSeconds(5));
        assertThat(extender.path("httpTimeout").asText()).isEqualTo("5s");
        var profiles = new ArrayList<String>();
        configuration.path("profiles").forEach(profile -> profiles.add(profile.path("schedulerName").asText()));
        assertThat(settings.schedulerNames()).containsExactlyInAnyOrderElementsOf(profiles);
    }

    @Test
    void theVerbsAreTheOnesTheExtenderServes() {
        assertThat(extender.path("filterVerb").asText()).isEqualTo(FILTER_VERB);
        assertThat(extender.path("prioritizeVerb").asText()).isEqualTo(PRIORITIZE_VERB);
        assertThat(extender.path("preemptVerb").asText()).isEqualTo(PREEMPT_VERB);
        assertThat(extender.path("bindVerb").asText()).as("the bind handshake").isEqualTo(BIND_VERB);
    }

    @Test
    void callsTheExtenderByNodeNameWithinTheDefaultTimeoutAndNeverSkipsIt() {
        assertThat(extender.path("nodeCacheCapable").asBoolean()).isTrue();
        assertThat(extender.path("ignorable").isBoolean()).isTrue();
        assertThat(extender.path("ignorable").asBoolean()).isFalse();
        assertThat(extender.path("httpTimeout").asText()).isEqualTo("5s");
        assertThat(extender.path("weight").asInt()).isPositive();
    }

    /** Any managed resource must be the one the device plugin registers; none at all lets CPU-only pods through. */
    @Test
    void managedResourcesIfAnyAreTheDevicePluginsResource() {
        Container plugin = PodTemplates.onlyContainer(install.one(DaemonSet.class, DEVICE_PLUGIN).getSpec().getTemplate());
        String registered = PodTemplates.flags(plugin).get("resource-name");
        assertThat(registered).isEqualTo(RESOURCE_NAME);

        var managed = new ArrayList<String>();
        extender.path("managedResources").forEach(r -> {
            managed.add(r.path("name").asText());
            assertThat(r.path("ignoredByScheduler").asBoolean()).as("kube-scheduler must still count GPUs").isFalse();
        });
        assertThat(managed).allSatisfy(name -> assertThat(name).isEqualTo(registered));
    }

    @Test
    void leaderElectionUsesItsOwnLeaseThatItsRoleGrants() {
        JsonNode election = configuration.path("leaderElection");
        assertThat(election.path("leaderElect").asBoolean()).isTrue();
        String lease = election.path("resourceName").asText();
        assertThat(lease).isEqualTo(SCHEDULER_NAME).isNotEqualTo("kube-scheduler");
        assertThat(election.path("resourceNamespace").asText()).isEqualTo(NAMESPACE);

        Deployment scheduler = install.one(Deployment.class, SCHEDULER_NAME);
        String account = scheduler.getSpec().getTemplate().getSpec().getServiceAccountName();
        List<PolicyRule> leaseRules = install.grantsOf(NAMESPACE, account).stream()
                .filter(g -> g.namespace().equals(Optional.of(NAMESPACE)))
                .map(Rendering.Grant::rule)
                .filter(r -> r.getResources().contains("leases"))
                .toList();
        assertThat(leaseRules).anySatisfy(r -> {
            assertThat(r.getResourceNames()).containsExactly(lease);
            assertThat(r.getVerbs()).contains("get", "update");
        });
        assertThat(leaseRules).anySatisfy(r -> assertThat(r.getVerbs()).contains("create"));
    }

    @Test
    void theSchedulerRunsTheStockImageWithThisConfiguration() {
        Deployment scheduler = install.one(Deployment.class, SCHEDULER_NAME);
        var template = scheduler.getSpec().getTemplate();
        Container container = PodTemplates.container(template, KUBE_SCHEDULER_CONTAINER);
        assertThat(Rendering.repository(container.getImage())).isEqualTo(KUBE_SCHEDULER_IMAGE);

        Path config = Path.of(PodTemplates.flags(container).get("config"));
        assertThat(config.getFileName().toString()).isEqualTo(SCHEDULER_CONFIG_KEY);
        String volume = container.getVolumeMounts().stream()
                .filter(m -> Path.of(m.getMountPath()).equals(config.getParent()))
                .findFirst().orElseThrow().getName();
        assertThat(template.getSpec().getVolumes())
                .anySatisfy(v -> {
                    assertThat(v.getName()).isEqualTo(volume);
                    assertThat(v.getConfigMap().getName()).isEqualTo(SCHEDULER_CONFIG_MAP);
                });
    }
}
