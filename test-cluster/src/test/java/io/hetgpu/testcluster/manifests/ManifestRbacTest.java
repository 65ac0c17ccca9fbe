package io.hetgpu.testcluster.manifests;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.hetgpu.deviceplugin.dra.DraPlugin;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.hetgpu.deviceplugin.DevicePlugin;
import io.hetgpu.deviceplugin.devices.DeviceListStrategy;
import io.hetgpu.extender.Extender;
import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.cluster.DraInformers;
import io.hetgpu.extender.cluster.JobObjectSizes;
import io.hetgpu.extender.cluster.LearnedThroughputsConfigMap;
import io.hetgpu.extender.http.ServerOptions;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.profile.SimulatedGpuSource;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.testcluster.api.ApiServer;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.kubelet.KubeletFolders;
import io.hetgpu.testcluster.kubelet.SimulatedKubelet;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static io.hetgpu.testcluster.manifests.ExpectedDeployment.EXTENDER_CONFIG_MAP;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.RESOURCE_NAME;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.SCHEDULER_NAME;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * RBAC that covers exactly the API calls hetgpu's programs make. A short run of the real device plugin
 * and the real extender against the test cluster's API server records every request each one makes
 * (told apart by User-Agent); the rendered ClusterRoles and Roles of each program's service account
 * must allow every one of them, and every permission they grant must be used in the run or justified
 * in {@link #JUSTIFIED}. A change in what the code requests fails here until the manifests follow. The node agent as
 * hetgpu's DRA driver is run apart and held to the DRA install's rules alike.
 */
class ManifestRbacTest {

    private static final List<String> NODES = List.of("gpu-1", "gpu-2");
    private static final Map<String, Quantity> NODE_RESOURCES = Map.of(
            "cpu", new Quantity("64"), "memory", new Quantity("256Gi"), "pods", new Quantity("110"));
    private static final String NAMESPACE = "default";
    /** Where the manifests run the extender. */
    private static final String EXTENDER_NAMESPACE = "hetgpu-system";
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    /**
     * Permissions the run does not exercise, as "PROGRAM verb group/resource" with why the program
     * needs them anyway.
     */
    private static final String LEADER_ELECTION = "kube-scheduler's leader election: the extender runs in hetgpu-scheduler's pods, "
            + "under its one service account";
    private static final Map<String, String> JUSTIFIED = justified(Map.of(
            "DEVICE_PLUGIN create events", "posted only when kubelet allocates other GPUs than a pod's hetgpu.io/gpu-devices "
                    + "(GpuAssignmentMismatch), which a run that follows the handshake never causes; device-plugin's "
                    + "BindHandshakeTest exercises it",
            "SCHEDULER_EXTENDER create coordination.k8s.io/leases", LEADER_ELECTION,
            "SCHEDULER_EXTENDER get coordination.k8s.io/leases", LEADER_ELECTION,
            "SCHEDULER_EXTENDER update coordination.k8s.io/leases", LEADER_ELECTION));

    /**
     * The objects job sizes are read from: the extender lists and watches only the kinds API discovery says the cluster
     * serves, and the run's API server (fabric8's mock) answers no discovery. JobObjectSizesTest lists and watches each;
     * {@link #theExtenderMayListAndWatchEveryKindItReadsJobSizesFrom} holds the rules to the code's list.
     */
    private static Map<String, String> justified(Map<String, String> byHand) {
        var all = new java.util.HashMap<>(byHand);
        for (String resource : JobObjectSizes.resources()) {
            for (String verb : List.of("list", "watch")) {
                all.put("SCHEDULER_EXTENDER " + verb + " " + resource, "job sizes, read only where the cluster serves the kind: "
                        + "the run's API server serves no API discovery");
            }
        }
        for (String resource : DraInformers.resources()) {
            for (String verb : List.of("list", "watch")) {
                all.put("SCHEDULER_EXTENDER " + verb + " " + resource, "DRA's objects, followed only where the cluster serves "
                        + "resource.k8s.io/v1: the run's API server serves no API discovery; DraInformersTest lists and watches each");
            }
        }
        return Map.copyOf(all);
    }

    private static final Map<Program, List<ApiCall>> CALLS = new EnumMap<>(Program.class);
    /** The same requests as they reached the server, query included. */
    private static final Map<Program, List<ApiServer.Request>> REQUESTS = new EnumMap<>(Program.class);

    @BeforeAll
    static void runThePluginAndTheExtender(@TempDir Path dir) throws Exception {
        var recorded = new ConcurrentLinkedQueue<ApiServer.Request>();
        try (var api = ApiServer.start();
             var admin = api.newClient();
             var kubeletClient = client(api, "test-kubelet");
             var schedulerClient = client(api, "test-scheduler");
             var pluginClient = client(api, userAgent(Program.DEVICE_PLUGIN));
             // In its pod the extender's client is in the namespace of its service account, where its Secret is.
             var extenderClient = new KubernetesClientBuilder().withConfig(new ConfigBuilder(api.config())
                     .withUserAgent(userAgent(Program.SCHEDULER_EXTENDER)).withNamespace(EXTENDER_NAMESPACE).build()).build()) {
            api.observe(recorded::add);
            // Two GPU nodes: with one feasible node kube-scheduler skips prioritize, and with it the placement Event.
            var components = new ArrayList<AutoCloseable>();
            try {
                for (String node : NODES) {
                    admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(node)
                            .addToLabels("kubernetes.io/hostname", node).addToLabels(ExpectedDeployment.GPU_NODE_LABEL, "true").endMetadata()
                            .withNewStatus().addToCapacity(NODE_RESOURCES).addToAllocatable(NODE_RESOURCES)
                            .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build()).create();
                    var folders = KubeletFolders.under(dir.resolve(node));
                    components.add(new SimulatedKubelet(node, RESOURCE_NAME, folders, kubeletClient).start());
                    components.add(DevicePlugin.start(new DevicePlugin.Settings(folders.devicePlugins(), folders.podResourcesSocket(),
                            RESOURCE_NAME, Set.of(DeviceListStrategy.ENVVAR), Duration.ofMillis(200), 0, node, CardCatalog.defaults()),
                            SimulatedGpuSource.open("dgx1-v100", node), Optional.of(pluginClient)));
                }
                for (String node : NODES) {
                    admin.nodes().withName(node).waitUntilCondition(n -> n != null && n.getMetadata().getAnnotations() != null
                            && n.getMetadata().getAnnotations().containsKey(HetgpuKeys.ANNOTATION_FREE)
                            && n.getStatus().getAllocatable().containsKey(RESOURCE_NAME), PATIENCE.toSeconds(), TimeUnit.SECONDS);
                }

                // The extender as deployed: its configuration from the rendered ConfigMap (events on).
                var rendered = Kubectl.kustomize(ManifestTree.ROOT).one(ConfigMap.class, EXTENDER_CONFIG_MAP)
                        .getData().get(DeployedConfiguration.EXTENDER_CONFIG_KEY);
                var config = ExtenderConfig.parse(rendered, EXTENDER_CONFIG_MAP);
                assertThat(config.events()).as("the deployed extender posts Events").isTrue();
                try (var extender = Extender.start(config, new ServerOptions("127.0.0.1", 0, config.bodyLimitBytes(), null, null),
                        Optional.of(extenderClient))) {
                    extender.synced().orTimeout(PATIENCE.toSeconds(), TimeUnit.SECONDS).join();
                    admin.pods().resource(new PodBuilder().withNewMetadata().withName("train").withNamespace(NAMESPACE).withUid("uid-train")
                            .addToAnnotations(HetgpuKeys.POD_WORKLOAD, "resnet50").endMetadata().withNewSpec().withSchedulerName(SCHEDULER_NAME)
                            .addNewContainer().withName("main").withImage("train").withNewResources()
                            .addToLimits(RESOURCE_NAME, new Quantity("2")).endResources().endContainer().endSpec()
                            .withNewStatus().withPhase("Pending").endStatus().build()).create();
                    var scheduler = new SchedulerDriver(schedulerClient, DeployedConfiguration.load(ManifestTree.ROOT)
                            .schedulerCalling(extender), HttpClient.newHttpClient(), 1);
                    assertThat(scheduler.scheduleRound()).singleElement().isInstanceOf(Decision.Bound.class);
                    // The placement Event is posted off the request path.
                    await().atMost(PATIENCE).until(() -> admin.v1().events().inNamespace(NAMESPACE).list().getItems().stream()
                            .anyMatch(e -> "HetgpuPlacement".equals(e.getReason())));
                    // The learned throughputs: read at the start and made at once (get, create); the pod ends as kubelet
                    // reports it, the extender learns from it and writes what it learned at its stop (update).
                    await().atMost(PATIENCE).until(() -> admin.configMaps().inNamespace(EXTENDER_NAMESPACE)
                            .withName(LearnedThroughputsConfigMap.NAME).get() != null);
                    var started = java.time.Instant.now().minusSeconds(600);
                    admin.pods().inNamespace(NAMESPACE).withName("train").editStatus(pod -> new PodBuilder(pod).editStatus()
                            .withPhase("Succeeded").withContainerStatuses(new io.fabric8.kubernetes.api.model.ContainerStatusBuilder()
                                    .withName("main").withNewState().withNewTerminated().withExitCode(0).withReason("Completed")
                                    .withStartedAt(started.toString()).withFinishedAt(started.plusSeconds(600).toString())
                                    .withMessage("hetgpu.io/work: 12000").endTerminated().endState().build()).endStatus().build());
                    await().atMost(PATIENCE).until(() -> extender.learning().orElseThrow().accepted() == 1);
                }
            } finally {
                for (var component : components.reversed()) {
                    component.close();
                }
            }
        }
        for (Program program : Program.values()) {
            REQUESTS.put(program, recorded.stream().filter(r -> userAgent(program).equals(r.userAgent())).toList());
            CALLS.put(program, REQUESTS.get(program).stream().filter(request -> !ApiCall.discovery(request)).map(ApiCall::of).toList());
        }
    }

    /** The node agent's requests as hetgpu's DRA driver ({@code --kubelet-api dra}), apart: it runs under another install. */
    private static final List<ApiCall> DRA_CALLS = new ArrayList<>();
    private static final String DRA_AGENT = "hetgpu-test/device_plugin_dra";
    /** The DRA driver's permissions the run does not exercise, as "verb group/resource", with why it needs them. */
    private static final Map<String, String> DRA_JUSTIFIED = Map.of(
            "get resource.k8s.io/resourceslices", "the slice read back every resync (30 s, longer than the run) in case someone "
                    + "else changed or deleted it; SlicePublisherTest exercises it",
            "delete resource.k8s.io/resourceslices", "extra slices of its node that a start finds (left by a crash between two "
                    + "writes); the run's API server selects no slices by field, so a start finds none; SlicePublisherTest exercises it");

    /**
     * The DRA driver on a node: registered by kubelet, its slice created (owned by its Node) and updated when a GPU turns
     * unhealthy, a pod's claim prepared and unprepared.
     */
    @BeforeAll
    static void runTheDraDriver(@TempDir Path dir) throws Exception {
        var recorded = new ConcurrentLinkedQueue<ApiServer.Request>();
        var node = "gpu-dra-1";
        try (var api = ApiServer.start();
             var admin = api.newClient();
             var kubeletClient = client(api, "test-kubelet");
             var agentClient = client(api, DRA_AGENT)) {
            api.observe(recorded::add);
            admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().withNewStatus()
                    .addToCapacity(NODE_RESOURCES).addToAllocatable(NODE_RESOURCES).endStatus().build()).create();
            var folders = KubeletFolders.under(dir.resolve(node));
            var gpus = SimulatedGpuSource.open("dgx1-v100", node);
            try (var kubelet = new SimulatedKubelet(node, RESOURCE_NAME, folders, kubeletClient).start();
                 var plugin = DraPlugin.start(new DraPlugin.Settings(folders.pluginsRegistry(), folders.plugins(), folders.cdi(),
                         HetgpuDra.DRIVER, node, 0, CardCatalog.defaults()), gpus, agentClient)) {
                await().atMost(PATIENCE).until(() -> plugin.notRegistered().isEmpty()
                        && admin.resources(ResourceSlice.class).list().getItems().size() == 1);
                gpus.setHealth(gpus.topology().device(7).uuid(), DeviceHealth.UNHEALTHY, "XID 79");
                await().atMost(PATIENCE).until(() -> admin.resources(ResourceSlice.class).list().getItems().getFirst().getSpec().getPool()
                        .getGeneration() > 1);

                var claim = admin.resources(ResourceClaim.class).resource(new ResourceClaimBuilder().withNewMetadata().withName("pair")
                        .withNamespace(NAMESPACE).endMetadata().build()).create();
                claim.setStatus(new ResourceClaimBuilder().withNewStatus().withNewAllocation().withNewDevices().withResults(
                                new DeviceRequestAllocationResultBuilder().withDriver(HetgpuDra.DRIVER).withPool(node).withDevice("gpu-0")
                                        .withRequest("gpus").build())
                        .endDevices().endAllocation().endStatus().build().getStatus());
                admin.resources(ResourceClaim.class).resource(claim).updateStatus();
                admin.pods().resource(new PodBuilder().withNewMetadata().withName("train").withNamespace(NAMESPACE).endMetadata()
                        .withNewSpec().withNodeName(node).addNewResourceClaim().withName("gpus").withResourceClaimName("pair")
                        .endResourceClaim().addNewContainer().withName("main").withImage("trainer").endContainer().endSpec().build()).create();
                await().atMost(PATIENCE).until(() -> plugin.preparedClaims() == 1);
                admin.pods().inNamespace(NAMESPACE).withName("train").delete();
                await().atMost(PATIENCE).until(() -> plugin.preparedClaims() == 0);
            }
        }
        recorded.stream().filter(r -> DRA_AGENT.equals(r.userAgent()) && !ApiCall.discovery(r)).map(ApiCall::of).forEach(DRA_CALLS::add);
    }

    /** hetgpu's DRA driver as shipped: the DRA overlay and the chart with {@code devicePlugin.kubeletApi: dra}. */
    static List<String> draInstalls() {
        return List.of("manifests/overlays/dra", "chart");
    }

    private static Rendering draInstall(String name) {
        return name.equals("chart") ? HelmChart.render("1.37.1", "devicePlugin: {kubeletApi: dra}") : Kubectl.kustomize(ManifestTree.DRA_OVERLAY);
    }

    @ParameterizedTest
    @MethodSource("draInstalls")
    void everyRequestOfTheDraDriverIsAllowedByItsServiceAccountsRoles(String install) {
        assertThat(DRA_CALLS).as("the DRA driver made requests in the run").isNotEmpty();
        var grants = grants(draInstall(install), Program.DEVICE_PLUGIN);
        var denied = DRA_CALLS.stream().filter(call -> grants.stream().noneMatch(g -> holds(g, call) && call.allowedBy(g.rule())))
                .map(ApiCall::describe).distinct().toList();
        assertThat(denied).as("requests the RBAC of " + install + " would refuse the DRA driver (403)").isEmpty();
    }

    @ParameterizedTest
    @MethodSource("draInstalls")
    void everyPermissionOfTheDraDriverIsUsedOrJustified(String install) {
        var unused = new TreeSet<String>();
        for (Rendering.Grant grant : grants(draInstall(install), Program.DEVICE_PLUGIN)) {
            var rule = grant.rule();
            for (String verb : rule.getVerbs()) {
                for (String group : rule.getApiGroups()) {
                    for (String resource : rule.getResources()) {
                        String permission = verb + " " + (group.isEmpty() ? "" : group + "/") + resource;
                        boolean used = DRA_CALLS.stream().anyMatch(call -> call.verb().equals(verb) && call.group().equals(group)
                                && call.resource().equals(resource) && holds(grant, call) && call.allowedBy(rule));
                        if (!used && !DRA_JUSTIFIED.containsKey(permission)) {
                            unused.add(permission + " (" + grant.source() + ")");
                        }
                    }
                }
            }
        }
        assertThat(unused).as("permissions the DRA driver's run did not use; drop them or justify them in DRA_JUSTIFIED").isEmpty();
    }

    static List<Path> installs() {
        return KustomizationsTest.installs();
    }

    @ParameterizedTest
    @MethodSource("installs")
    void everyRequestOfEachProgramIsAllowedByItsServiceAccountsRoles(Path folder) {
        Rendering rendering = Kubectl.kustomize(folder);
        var denied = new ArrayList<String>();
        for (Program program : Program.values()) {
            assertThat(CALLS.get(program)).as(program + " made requests in the run").isNotEmpty();
            var grants = grants(rendering, program);
            for (ApiCall call : CALLS.get(program)) {
                if (grants.stream().noneMatch(g -> holds(g, call) && call.allowedBy(g.rule()))) {
                    denied.add(program + ": " + call.describe());
                }
            }
        }
        assertThat(denied).as("requests the rendered RBAC of " + folder + " would refuse (403)").isEmpty();
    }

    @ParameterizedTest
    @MethodSource("installs")
    void everyPermissionOfEachProgramIsUsedOrJustified(Path folder) {
        Rendering rendering = Kubectl.kustomize(folder);
        var unused = new TreeSet<String>();
        for (Program program : Program.values()) {
            for (Rendering.Grant grant : grants(rendering, program)) {
                var rule = grant.rule();
                assertThat(rule.getVerbs()).as(grant.source()).doesNotContain("*");
                assertThat(rule.getResources()).as(grant.source()).doesNotContain("*");
                assertThat(rule.getApiGroups()).as(grant.source()).doesNotContain("*");
                for (String verb : rule.getVerbs()) {
                    for (String group : rule.getApiGroups()) {
                        for (String resource : rule.getResources()) {
                            String permission = program + " " + verb + " " + (group.isEmpty() ? "" : group + "/") + resource;
                            boolean used = CALLS.get(program).stream().anyMatch(call -> call.verb().equals(verb)
                                    && call.group().equals(group) && call.resource().equals(resource) && holds(grant, call)
                                    && call.allowedBy(rule));
                            if (!used && !JUSTIFIED.containsKey(permission)) {
                                unused.add(permission + " (" + grant.source() + ")");
                            }
                        }
                    }
                }
            }
        }
        assertThat(unused).as("permissions no request of the run used; drop them or justify them in JUSTIFIED").isEmpty();
    }

    @ParameterizedTest
    @MethodSource("installs")
    void theExtenderMayListAndWatchEveryKindItReadsJobSizesFrom(Path folder) {
        var grants = grants(Kubectl.kustomize(folder), Program.SCHEDULER_EXTENDER);
        var denied = new ArrayList<String>();
        for (String resource : JobObjectSizes.resources()) {
            var groupAndPlural = resource.split("/");
            for (String verb : List.of("list", "watch")) {
                var call = new ApiCall(verb, groupAndPlural[0], groupAndPlural[1], Optional.empty(), Optional.empty());
                if (grants.stream().noneMatch(g -> g.namespace().isEmpty() && call.allowedBy(g.rule()))) {
                    denied.add(call.describe());
                }
            }
        }
        assertThat(denied).as("job-size objects the extender's ClusterRole does not let it list and watch cluster-wide").isEmpty();
    }

    @ParameterizedTest
    @MethodSource("installs")
    void theExtenderMayListAndWatchEveryDraObjectItReads(Path folder) {
        var grants = grants(Kubectl.kustomize(folder), Program.SCHEDULER_EXTENDER);
        var denied = new ArrayList<String>();
        for (String resource : DraInformers.resources()) {
            var groupAndPlural = resource.split("/");
            for (String verb : List.of("list", "watch")) {
                var call = new ApiCall(verb, groupAndPlural[0], groupAndPlural[1], Optional.empty(), Optional.empty());
                if (grants.stream().noneMatch(g -> g.namespace().isEmpty() && call.allowedBy(g.rule()))) {
                    denied.add(call.describe());
                }
            }
        }
        assertThat(denied).as("DRA objects the extender's ClusterRole does not let it list and watch cluster-wide").isEmpty();
    }

    /**
     * What RBAC cannot narrow (its pods list/watch holds cluster-wide), the plugin narrows itself: every list and watch of
     * pods it makes asks only for the pods bound to its own node.
     */
    @Test
    void theDevicePluginListsAndWatchesOnlyThePodsOfItsOwnNode() {
        var podReads = REQUESTS.get(Program.DEVICE_PLUGIN).stream()
                .filter(request -> request.path().matches("/api/v1/pods(\\?.*)?")).toList();
        assertThat(podReads).as("the plugins listed and watched pods").isNotEmpty();
        assertThat(podReads).allSatisfy(request -> assertThat(java.net.URLDecoder.decode(request.path(), java.nio.charset.StandardCharsets.UTF_8))
                .as(request.method() + " " + request.path()).containsAnyOf(NODES.stream().map(node -> "fieldSelector=spec.nodeName=" + node)
                        .toArray(String[]::new)));
    }

    private static List<Rendering.Grant> grants(Rendering rendering, Program program) {
        var accounts = rendering.running(ImageSetting.of(program).repository()).stream()
                .map(r -> r.workload().object().getMetadata().getNamespace() + "/" + r.workload().template().getSpec().getServiceAccountName())
                .distinct().toList();
        assertThat(accounts).as(program + " runs under one service account").hasSize(1);
        String[] account = accounts.getFirst().split("/");
        var grants = rendering.grantsOf(account[0], account[1]);
        assertThat(grants).as(program + "'s service account " + accounts.getFirst() + " is granted something").isNotEmpty();
        return grants;
    }

    /** A ClusterRoleBinding's rules hold in every namespace and for cluster objects; a RoleBinding's in its namespace only. */
    private static boolean holds(Rendering.Grant grant, ApiCall call) {
        return grant.namespace().isEmpty() || grant.namespace().equals(call.namespace());
    }

    private static String userAgent(Program program) {
        return "hetgpu-test/" + program.name().toLowerCase();
    }

    private static KubernetesClient client(ApiServer api, String userAgent) {
        return new KubernetesClientBuilder().withConfig(new ConfigBuilder(api.config()).withUserAgent(userAgent).build()).build();
    }
}
