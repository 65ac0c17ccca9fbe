package io.hetgpu.testcluster.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClass;
import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.policy.PriorityThresholds;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every value the chart's README documents changes what it says when set (each render below sets some and
 * checks the objects), every value of values.yaml is documented, and a bad value is refused with Helm's own
 * message from values.schema.json, naming the field.
 */
class ChartValuesTest {

    private static final String KUBE = "1.37.1";
    private static final Pattern DOCUMENTED_VALUE = Pattern.compile("(?m)^\\| `([A-Za-z.]+)` \\|");

    /** Values set together and what they must change. */
    record ValueRender(String name, String values, Consumer<Rendering> expect) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<ValueRender> renders() {
        return Stream.of(
                new ValueRender("global.imageRegistry replaces every image's registry", "global: {imageRegistry: mirror.internal:5000}",
                        r -> assertThat(r.workloads().stream().flatMap(w -> w.template().getSpec().getContainers().stream()).map(Container::getImage))
                                .hasSize(3).allMatch(image -> image.startsWith("mirror.internal:5000/"))),
                new ValueRender("namespace", "namespace: {name: gpu-scheduling, create: false}", r -> {
                    assertThat(r.all(Namespace.class)).isEmpty();
                    assertThat(r.objects().stream().map(o -> o.getMetadata().getNamespace()).filter(ns -> ns != null).distinct())
                            .containsExactlyInAnyOrder("gpu-scheduling", "kube-system");
                    assertThat(r.documents().stream().filter(d -> d.object().getKind().equals("ValidatingAdmissionPolicy")).findFirst()
                            .orElseThrow().source().toString()).contains("system:serviceaccount:gpu-scheduling:hetgpu-device-plugin");
                    assertThat(schedulerConfig(r).path("leaderElection").path("resourceNamespace").asText()).isEqualTo("gpu-scheduling");
                }),
                new ValueRender("priorityClasses.create", "priorityClasses: {create: false}",
                        r -> assertThat(r.all(PriorityClass.class)).isEmpty()),
                new ValueRender("admissionPolicy.enabled", "admissionPolicy: {enabled: false}",
                        r -> assertThat(r.objects()).noneMatch(o -> o.getKind().startsWith("ValidatingAdmissionPolicy"))),
                new ValueRender("networkPolicies.enabled", "networkPolicies: {enabled: false}",
                        r -> assertThat(r.all(NetworkPolicy.class)).isEmpty()),
                new ValueRender("devicePlugin's image, nodes and container", """
                        devicePlugin:
                          image: {registry: ghcr.io, repository: acme/hetgpu-device-plugin, tag: 0.9.1}
                          nodeSelector: {hetgpu.io/gpu-node: null, node.acme.io/gpu: "yes"}
                          tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoExecute}]
                          runtimeClassName: ""
                          priorityClassName: gpu-critical
                          resourceName: acme.io/gpu
                          httpPort: 9555
                          javaToolOptions: -Xmx96m
                          resources: {requests: {cpu: 20m, memory: 100Mi}, limits: {memory: 300Mi}}
                        """, r -> {
                    var pod = plugin(r).getSpec().getTemplate().getSpec();
                    var container = pod.getContainers().getFirst();
                    assertThat(container.getImage()).isEqualTo("ghcr.io/acme/hetgpu-device-plugin:0.9.1");
                    assertThat(pod.getNodeSelector()).isEqualTo(Map.of("node.acme.io/gpu", "yes"));
                    assertThat(pod.getTolerations()).singleElement().satisfies(t -> assertThat(t.getKey()).isEqualTo("dedicated"));
                    assertThat(pod.getRuntimeClassName()).isNull();
                    assertThat(pod.getPriorityClassName()).isEqualTo("gpu-critical");
                    assertThat(container.getArgs()).contains("--resource-name=acme.io/gpu", "--http-port=9555");
                    assertThat(container.getPorts()).singleElement().satisfies(p -> assertThat(p.getContainerPort()).isEqualTo(9555));
                    assertThat(container.getEnv()).anySatisfy(e -> {
                        assertThat(e.getName()).isEqualTo("JAVA_TOOL_OPTIONS");
                        assertThat(e.getValue()).isEqualTo("-Xmx96m");
                    });
                    assertThat(container.getResources().getLimits()).isEqualTo(Map.of("memory", new Quantity("300Mi")));
                    assertThat(extenderConfig(r).resourceName()).as("the extender places the resource the plugin registers").isEqualTo("acme.io/gpu");
                }),
                new ValueRender("devicePlugin.simulatedProfiles", "devicePlugin: {simulatedProfiles: [dgx-a100, k80-4x]}",
                        r -> assertThat(r.all(DaemonSet.class)).extracting(ds -> ds.getMetadata().getName())
                                .containsExactly("hetgpu-device-plugin-sim-dgx-a100", "hetgpu-device-plugin-sim-k80-4x")),
                new ValueRender("extender's image, container and whole policy group", """
                        extender:
                          image: {registry: "", repository: acme/extender, tag: dev}
                          javaToolOptions: -XX:MaxRAMPercentage=50
                          resources: {requests: {cpu: "1", memory: 2Gi}, limits: {memory: 4Gi}}
                          jobPlanDeadline: 2m
                          maxJobPods: 512
                          events: {enabled: false, intervalSeconds: 30}
                          policy:
                            priority: {high: 500, low: -50}
                            weights: {tier: 6, nvlink: 1, job: 2, data: 0, cpu: 7, packing: 3}
                            tiers: [{model: L40S, rank: 65, computeCapability: "8.9", maxMemoryMiB: 46068}]
                            workloads: {resnet50: {K80: 1.8, V100: 18.0}}
                            minimumSpeedShare: 0.3
                            highPriorityReserve: 8
                            evictForFasterCards: 0.8
                            jobHeadroom: 8
                        """, r -> {
                    var extender = container(r, ExpectedDeployment.EXTENDER_CONTAINER);
                    assertThat(extender.getImage()).isEqualTo("acme/extender:dev");
                    assertThat(extender.getEnv()).anySatisfy(e -> assertThat(e.getValue()).isEqualTo("-XX:MaxRAMPercentage=50"));
                    assertThat(extender.getResources().getLimits()).isEqualTo(Map.of("memory", new Quantity("4Gi")));
                    // Read by the extender's own parser, as the extender reads its ConfigMap.
                    var config = extenderConfig(r);
                    assertThat(config.jobPlanDeadline()).isEqualTo(Duration.ofMinutes(2));
                    assertThat(config.maxJobPods()).isEqualTo(512);
                    assertThat(config.events()).isFalse();
                    assertThat(config.eventIntervalSeconds()).isEqualTo(30);
                    assertThat(config.priority()).isEqualTo(new PriorityThresholds(500, -50));
                    assertThat(config.weights().byName()).containsEntry("tier", 6).containsEntry("data", 0).containsEntry("packing", 3);
                    assertThat(config.tiers()).singleElement().satisfies(card -> assertThat(card.model()).isEqualTo("L40S"));
                    assertThat(config.workloads().of("resnet50", "V100")).isEqualTo(18.0);
                    assertThat(config.workloads().minimumShare()).isEqualTo(0.3);
                    assertThat(config.reserve().gpus()).isEqualTo(8);
                    assertThat(config.evictionFloor().share()).isEqualTo(0.8);
                    assertThat(config.jobHeadroom().gpus()).isEqualTo(8);
                }),
                new ValueRender("scheduler's image, replicas, container and extender entry", """
                        scheduler:
                          image: {registry: mirror.acme.io, repository: k8s/kube-scheduler, tag: v1.37.0}
                          replicas: 3
                          resources: {requests: {cpu: 200m, memory: 256Mi}, limits: {memory: 1Gi}}
                          extender: {weight: 9, httpTimeout: 8s, ignorable: true}
                        """, r -> {
                    assertThat(ChartRenderTest.kubeSchedulerImage(r)).isEqualTo("mirror.acme.io/k8s/kube-scheduler:v1.37.0");
                    assertThat(r.one(Deployment.class, ExpectedDeployment.SCHEDULER).getSpec().getReplicas()).isEqualTo(3);
                    assertThat(container(r, ExpectedDeployment.KUBE_SCHEDULER_CONTAINER).getResources().getLimits())
                            .isEqualTo(Map.of("memory", new Quantity("1Gi")));
                    var entry = schedulerConfig(r).path("extenders").get(0);
                    assertThat(entry.path("weight").asInt()).isEqualTo(9);
                    assertThat(entry.path("httpTimeout").asText()).isEqualTo("8s");
                    assertThat(entry.path("ignorable").asBoolean()).isTrue();
                    assertThat(extenderConfig(r).httpTimeout()).as("the extender's binds end within kube-scheduler's timeout")
                            .isEqualTo(Duration.ofSeconds(8));
                }),
                new ValueRender("hetgpu's DRA driver: the node agent's API, the mutation off, the claim templates' namespaces", """
                        devicePlugin: {kubeletApi: dra}
                        dra: {priorityMutation: false, claimTemplateNamespaces: [ml]}
                        """, r -> {
                    assertThat(plugin(r).getSpec().getTemplate().getSpec().getContainers().getFirst().getArgs()).contains("--kubelet-api=dra");
                    var kinds = r.objects().stream().map(HasMetadata::getKind).toList();
                    assertThat(kinds).contains("DeviceClass", "ValidatingAdmissionPolicy").doesNotContain("MutatingAdmissionPolicy");
                    assertThat(r.objects()).filteredOn(o -> o.getKind().equals("ResourceClaimTemplate")).hasSize(12)
                            .allSatisfy(t -> assertThat(t.getMetadata().getNamespace()).isEqualTo("ml"));
                }),
                new ValueRender("monitoring, labelled for a Prometheus, each part on or off",
                        "monitoring: {enabled: true, labels: {release: kube-prometheus-stack}, serviceMonitors: false, rules: true, dashboard: false}",
                        r -> {
                            var kinds = r.objects().stream().map(HasMetadata::getKind).toList();
                            assertThat(kinds).contains("PrometheusRule").doesNotContain("ServiceMonitor");
                            assertThat(r.objects()).filteredOn(o -> o.getKind().equals("PrometheusRule")).singleElement()
                                    .satisfies(rule -> assertThat(rule.getMetadata().getLabels()).containsEntry("release", "kube-prometheus-stack"));
                            assertThat(r.all(ConfigMap.class)).noneMatch(c -> c.getMetadata().getName().equals(MonitoringQueries.DASHBOARD_CONFIG_MAP));
                        }));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("renders")
    void eachValueChangesWhatItSays(ValueRender render) {
        render.expect().accept(HelmChart.render(KUBE, render.values()));
    }

    @Test
    void everyValueTheReadmeDocumentsIsSetByARender() throws IOException {
        var set = new TreeSet<String>();
        renders().forEach(render -> paths(ManifestTree.yaml(render.values()), "", set));
        assertThat(documented()).as("values documented in charts/hetgpu/README.md that no render sets")
                .hasSizeGreaterThan(40).allSatisfy(value -> assertThat(set).as(value).contains(value));
    }

    @Test
    void everyValueOfValuesYamlIsDocumented() throws IOException {
        var documented = documented();
        var leaves = new TreeSet<String>();
        leaves(ManifestTree.yaml(Files.readString(HelmChart.VALUES)), "", leaves);
        assertThat(leaves).hasSizeGreaterThan(40).allSatisfy(leaf -> assertThat(documented)
                .as("charts/hetgpu/README.md documents %s", leaf)
                .anyMatch(value -> leaf.equals(value) || leaf.startsWith(value + ".")));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "extender: {policy: {weights: {nvlnk: 3}}}                | at '/extender/policy/weights': additional properties 'nvlnk' not allowed",
            "scheduler: {replicas: 0}                                 | at '/scheduler/replicas'",
            "scheduler: {extender: {httpTimeout: '5'}}                | at '/scheduler/extender/httpTimeout'",
            "admissionPolicy: {enabled: sometimes}                    | at '/admissionPolicy/enabled'",
            "devicePlugin: {httpPort: 70000}                          | at '/devicePlugin/httpPort'",
            "extender: {policy: {evictForFasterCards: 1.5}}           | at '/extender/policy/evictForFasterCards'",
            "extender: {policy: {jobHeadroom: -8}}                    | at '/extender/policy/jobHeadroom'",
            "extender: {maxJobPods: 1}                                | at '/extender/maxJobPods'",
            "devicePlugin: {resourceName: gpu}                        | at '/devicePlugin/resourceName'",
            "monitoring: {enabeld: true}                              | at '/monitoring': additional properties 'enabeld' not allowed",
            "devicePlugin: {kubeletApi: kubelet}                      | at '/devicePlugin/kubeletApi'",
            "dra: {claimTemplateNamespaces: [ML]}                     | at '/dra/claimTemplateNamespaces/0'"})
    void aBadValueIsRefusedWithHelmsMessageNamingIt(String values, String message) {
        assertThat(HelmChart.refusal(KUBE, values))
                .contains("values don't meet the specifications of the schema")
                .contains(message);
    }

    private static Set<String> documented() throws IOException {
        var values = new TreeSet<String>();
        DOCUMENTED_VALUE.matcher(Files.readString(HelmChart.README)).results().map(m -> m.group(1)).forEach(values::add);
        return values;
    }

    /** Every path a YAML tree sets, objects and their fields alike. */
    private static void paths(JsonNode node, String prefix, Set<String> into) {
        if (!prefix.isEmpty()) {
            into.add(prefix);
        }
        if (node.isObject()) {
            node.properties().forEach(e -> paths(e.getValue(), prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey(), into));
        }
    }

    /** The paths of a YAML tree's leaves: scalars, lists and empty objects. */
    private static void leaves(JsonNode node, String prefix, Set<String> into) {
        if (node.isObject() && !node.isEmpty()) {
            node.properties().forEach(e -> leaves(e.getValue(), prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey(), into));
        } else {
            into.add(prefix);
        }
    }

    private static DaemonSet plugin(Rendering r) {
        return r.one(DaemonSet.class, ExpectedDeployment.DEVICE_PLUGIN);
    }

    private static Container container(Rendering r, String name) {
        return r.one(Deployment.class, ExpectedDeployment.SCHEDULER).getSpec().getTemplate().getSpec().getContainers().stream()
                .filter(c -> c.getName().equals(name)).findFirst().orElseThrow();
    }

    static JsonNode schedulerConfig(Rendering r) {
        return ManifestTree.yaml(r.one(ConfigMap.class, ExpectedDeployment.SCHEDULER_CONFIG_MAP).getData().get(ExpectedDeployment.SCHEDULER_CONFIG_KEY));
    }

    static ExtenderConfig extenderConfig(Rendering r) {
        var text = r.one(ConfigMap.class, ExpectedDeployment.EXTENDER_CONFIG_MAP).getData().get("extender.yaml");
        try {
            return ExtenderConfig.parse(text, "extender.yaml");
        } catch (ExtenderConfig.ConfigException e) {
            throw new AssertionError("the extender refuses the chart's extender.yaml: " + e.getMessage() + "\n" + text, e);
        }
    }
}
