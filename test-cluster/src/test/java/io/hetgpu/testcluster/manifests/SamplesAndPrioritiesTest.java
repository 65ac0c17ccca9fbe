package io.hetgpu.testcluster.manifests;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClass;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static io.hetgpu.gpu.inventory.HetgpuKeys.DATA_LOCALITY;
import static io.hetgpu.gpu.inventory.HetgpuKeys.POD_GPU_PREFERENCE;
import static io.hetgpu.gpu.inventory.HetgpuKeys.POD_INTERCONNECT;
import static io.hetgpu.gpu.inventory.HetgpuKeys.POD_JOB;
import static io.hetgpu.gpu.inventory.HetgpuKeys.POD_ROLE;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.DEFAULT_POD_PRIORITY;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.EXTENDER_CONFIG_MAP;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.HIGH_PRIORITY_CLASS;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.LOW_PRIORITY_CLASS;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.RESOURCE_NAME;
import static io.hetgpu.testcluster.manifests.ExpectedDeployment.SCHEDULER_NAME;
import static io.hetgpu.testcluster.manifests.ManifestTree.SAMPLES;
import static org.assertj.core.api.Assertions.assertThat;

/** The PriorityClasses against the extender's thresholds, and the sample workloads against the contract. */
class SamplesAndPrioritiesTest {

    private static final Pattern LOCALITY = Pattern.compile("(node|rack|zone)=[a-z0-9.-]+(,[a-z0-9.-]+)*");
    private static final Set<String> ROLES = Set.of("ps", "worker", "chief", "evaluator");

    private final ManifestTree manifests = ManifestTree.load();
    private final Rendering install = Kubectl.kustomize(ManifestTree.ROOT);
    private final List<HasMetadata> samples = manifests.in(SAMPLES).stream().map(ManifestDocument::object).toList();
    @Test
    void priorityClassesBracketTheExtenderThresholds() throws Exception {
        // Parsed by the extender's own (strict) configuration reader, as the deployed extender reads it.
        var thresholds = io.hetgpu.testcluster.cluster.DeployedConfiguration.load(ManifestTree.ROOT).extender().priority();
        int high = thresholds.high();
        int low = thresholds.low();
        PriorityClass training = install.one(PriorityClass.class, HIGH_PRIORITY_CLASS);
        PriorityClass sweep = install.one(PriorityClass.class, LOW_PRIORITY_CLASS);

        assertThat(training.getValue()).isGreaterThanOrEqualTo(high);
        assertThat(sweep.getValue()).isLessThanOrEqualTo(low);
        // A pod without a class must stay tier-neutral, not be treated as low priority.
        assertThat(DEFAULT_POD_PRIORITY).isGreaterThan(low).isLessThan(high);
        assertThat(training.getGlobalDefault()).isNotEqualTo(Boolean.TRUE);
        assertThat(sweep.getGlobalDefault()).isNotEqualTo(Boolean.TRUE);
        assertThat(sweep.getPreemptionPolicy()).isEqualTo("Never");
    }

    @Test
    void theDeployedPolicyIsTheExtendersDefaultPolicy() throws Exception {
        // The simulator and the extender's own tests measure the defaults: what is deployed must be that.
        var deployed = io.hetgpu.testcluster.cluster.DeployedConfiguration.load(ManifestTree.ROOT).extender();

        assertThat(deployed.priority()).isEqualTo(io.hetgpu.extender.ExtenderConfig.DEFAULTS.priority());
        assertThat(deployed.weights()).isEqualTo(io.hetgpu.extender.ExtenderConfig.DEFAULTS.weights());
    }

    @Test
    void everySamplePodThatAsksForGpusUsesTheHetgpuSchedulerAndAKnownPriorityClass() {
        List<PodTemplateSpec> templates = samples.stream().flatMap(o -> PodTemplates.of(o).stream()).toList();
        assertThat(templates).filteredOn(t -> PodTemplates.gpus(t, RESOURCE_NAME) > 0).hasSizeGreaterThanOrEqualTo(2)
                .allSatisfy(t -> assertThat(t.getSpec().getSchedulerName()).isEqualTo(SCHEDULER_NAME));
        Set<String> classes = install.all(PriorityClass.class).stream()
                .map(c -> c.getMetadata().getName()).collect(Collectors.toSet());
        assertThat(templates).allSatisfy(t -> assertThat(classes).contains(t.getSpec().getPriorityClassName()));
    }

    @Test
    void multiGpuSamplePodsAskForNvlink() {
        samples.stream().flatMap(o -> PodTemplates.of(o).stream())
                .filter(t -> PodTemplates.gpus(t, RESOURCE_NAME) > 1)
                .forEach(t -> assertThat(PodTemplates.annotations(t)).containsEntry(POD_INTERCONNECT, "nvlink"));
    }

    @Test
    void theTensorflowClusterSpecNamesEveryTaskThroughItsHeadlessService() {
        StatefulSet ps = sample(StatefulSet.class, "resnet50-ps");
        Job workers = sample(Job.class, "resnet50-worker");
        assertThat(workers.getSpec().getCompletionMode()).isEqualTo("Indexed");

        Map<String, List<String>> expected = Map.of(
                "ps", taskAddresses(ps.getMetadata().getName(), ps.getSpec().getServiceName(), ps.getSpec().getReplicas()),
                "worker", taskAddresses(workers.getMetadata().getName(), workers.getSpec().getTemplate().getSpec().getSubdomain(),
                        workers.getSpec().getCompletions()));

        for (PodTemplateSpec template : List.of(ps.getSpec().getTemplate(), workers.getSpec().getTemplate())) {
            String role = template.getMetadata().getLabels().get(POD_ROLE);
            JsonNode tfConfig = tfConfig(template);
            assertThat(tfConfig.path("task").path("type").asText()).isEqualTo(role);
            assertThat(tfConfig.path("cluster").properties()).hasSize(expected.size());
            expected.forEach((r, addresses) -> assertThat(tfConfig.path("cluster").path(r))
                    .extracting(JsonNode::asText).as(role + " sees " + r).containsExactlyElementsOf(addresses));
            assertThat(template.getMetadata().getLabels()).containsEntry(POD_JOB, "resnet50");
        }
    }

    @Test
    void theHeadlessServicesSelectTheirRoleOnTheTaskPort() {
        for (HasMetadata workload : List.of(sample(StatefulSet.class, "resnet50-ps"), sample(Job.class, "resnet50-worker"))) {
            PodTemplateSpec template = PodTemplates.of(workload).orElseThrow();
            String serviceName = workload instanceof StatefulSet s ? s.getSpec().getServiceName() : template.getSpec().getSubdomain();
            Service service = sample(Service.class, serviceName);
            assertThat(service.getSpec().getClusterIP()).isEqualTo("None");
            assertThat(template.getMetadata().getLabels()).containsAllEntriesOf(service.getSpec().getSelector());
            assertThat(service.getSpec().getSelector()).containsKeys(POD_JOB, POD_ROLE);
            assertThat(ROLES).contains(template.getMetadata().getLabels().get(POD_ROLE));
            int taskPort = Integer.parseInt(tfConfig(template).path("cluster").path("ps").get(0).asText().replaceAll(".*:", ""));
            assertThat(service.getSpec().getPorts()).anySatisfy(p -> assertThat(p.getPort()).isEqualTo(taskPort));
            assertThat(PodTemplates.onlyContainer(template).getPorts()).anySatisfy(p -> assertThat(p.getContainerPort()).isEqualTo(taskPort));
        }
    }

    @Test
    void theJobsVolumesAreClaimsOfTheSampleAndTheDataSaysWhereItLives() {
        PodTemplateSpec workers = sample(Job.class, "resnet50-worker").getSpec().getTemplate();
        var claims = workers.getSpec().getVolumes().stream()
                .filter(v -> v.getPersistentVolumeClaim() != null)
                .map(v -> v.getPersistentVolumeClaim().getClaimName())
                .toList();
        assertThat(claims).hasSize(2);
        var annotated = new ArrayList<String>();
        for (String claim : claims) {
            PersistentVolumeClaim pvc = sample(PersistentVolumeClaim.class, claim);
            var annotations = pvc.getMetadata().getAnnotations();
            if (annotations != null && annotations.containsKey(DATA_LOCALITY)) {
                assertThat(annotations.get(DATA_LOCALITY)).matches(LOCALITY);
                annotated.add(claim);
            }
        }
        assertThat(annotated).containsExactly("resnet50-imagenet");
        assertThat(sample(PersistentVolumeClaim.class, "resnet50-imagenet").getMetadata().getAnnotations())
                .containsEntry(DATA_LOCALITY, "rack=rack-a");
    }

    @Test
    void theSweepIsLowPriorityParallelSingleGpuWithTheDefaultPreference() {
        Job sweep = sample(Job.class, "resnet50-lr-sweep");
        PodTemplateSpec template = sweep.getSpec().getTemplate();
        assertThat(template.getSpec().getPriorityClassName()).isEqualTo(LOW_PRIORITY_CLASS);
        assertThat(PodTemplates.gpus(template, RESOURCE_NAME)).isEqualTo(1);
        assertThat(sweep.getSpec().getParallelism()).isGreaterThan(1);
        assertThat(PodTemplates.annotations(template)).doesNotContainKey(POD_GPU_PREFERENCE);
    }

    private <T extends HasMetadata> T sample(Class<T> type, String name) {
        return samples.stream().filter(type::isInstance).map(type::cast)
                .filter(o -> o.getMetadata().getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no sample " + type.getSimpleName() + " " + name));
    }

    /** StatefulSet pods and Indexed Job pods are both named {@code <name>-<i>}, reachable as {@code <name>-<i>.<service>}. */
    private static List<String> taskAddresses(String workload, String service, int count) {
        var addresses = new ArrayList<String>();
        for (int i = 0; i < count; i++) {
            addresses.add(workload + "-" + i + "." + service + ":2222");
        }
        return addresses;
    }

    /** TF_CONFIG as the container sees it, with the task index kubelet substitutes set to 0. */
    private static JsonNode tfConfig(PodTemplateSpec template) {
        List<EnvVar> env = PodTemplates.onlyContainer(template).getEnv();
        assertThat(env).extracting(EnvVar::getName).containsSubsequence("TASK_INDEX", "TF_CONFIG");
        String raw = env.stream().filter(e -> e.getName().equals("TF_CONFIG")).findFirst().orElseThrow().getValue();
        return ManifestTree.yaml(raw.replace("$(TASK_INDEX)", "0"));
    }
}
