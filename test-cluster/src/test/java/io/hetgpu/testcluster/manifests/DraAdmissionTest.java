package io.hetgpu.testcluster.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Variable;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacityBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraintBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.profile.ProfileLoader;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.dra.AllocationOutcome;
import io.hetgpu.kubescheduler.dra.DeviceSelectors;
import io.hetgpu.kubescheduler.dra.DraLimits;
import io.hetgpu.kubescheduler.dra.StructuredAllocator;
import io.hetgpu.testcluster.manifests.AdmissionPolicyEvaluation.Allowed;
import io.hetgpu.testcluster.manifests.AdmissionPolicyEvaluation.Denied;
import io.hetgpu.testcluster.manifests.AdmissionPolicyEvaluation.NotMatched;
import io.hetgpu.testcluster.manifests.AdmissionPolicyEvaluation.Request;
import io.hetgpu.testcluster.manifests.MutatingPolicyEvaluation.Mutated;
import io.hetgpu.testcluster.scheduler.DraObjects;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The admission policies of hetgpu's DRA driver, as {@code kubectl kustomize manifests/overlays/dra} renders them,
 * evaluated with CEL on the pods, claims and templates they are there for: a pod's priority, not its author, picks
 * the level of hetgpu's claim template (the MutatingAdmissionPolicy on 1.36+, the ValidatingAdmissionPolicy on every
 * release), and only hetgpu's own templates, copied by the resourceclaim controller, carry a preference among
 * hetgpu's GPUs. Then the shipped templates, allocated by the kube-scheduler module's allocator, give a high-priority
 * claim the newest cards on a node and a low-priority one the oldest, where first fit gives whatever comes first.
 */
class DraAdmissionTest {

    private static final String CONTROLLER = "system:serviceaccount:kube-system:resource-claim-controller";
    private static final List<Integer> COUNTS = List.of(1, 2, 4, 8);
    private static final List<String> LEVELS = List.of("high", "normal", "low");

    private final Rendering overlay = DraInstallTest.overlay();
    private final MutatingPolicyEvaluation mutation = MutatingPolicyEvaluation.of(overlay.one(MutatingAdmissionPolicy.class, "hetgpu-dra-claim-level"));
    private final AdmissionPolicyEvaluation levels = AdmissionPolicyEvaluation.of(overlay.one(ValidatingAdmissionPolicy.class, "hetgpu-dra-claim-level"));
    private final AdmissionPolicyEvaluation preferences = AdmissionPolicyEvaluation.of(overlay.one(ValidatingAdmissionPolicy.class, "hetgpu-dra-preferences"));
    private final List<ResourceClaimTemplate> templates = DraInstallTest.shippedTemplates();

    /** The levels the policies give are the extender's: its defaults, its shipped configuration, and the chart's values. */
    @Test
    void thePoliciesThresholdsAreTheExtenders() throws Exception {
        var shipped = ExtenderConfig.parse(overlay.one(ConfigMap.class, ExpectedDeployment.EXTENDER_CONFIG_MAP).getData()
                .get(io.hetgpu.testcluster.cluster.DeployedConfiguration.EXTENDER_CONFIG_KEY), "shipped").priority();
        assertThat(List.of(shipped.high(), shipped.low())).isEqualTo(List.of(PriorityThresholds.DEFAULTS.high(), PriorityThresholds.DEFAULTS.low()));
        for (var variables : List.of(overlay.one(MutatingAdmissionPolicy.class, "hetgpu-dra-claim-level").getSpec().getVariables(),
                overlay.one(ValidatingAdmissionPolicy.class, "hetgpu-dra-claim-level").getSpec().getVariables())) {
            assertThat(thresholds(variables)).isEqualTo(List.of(String.valueOf(shipped.high()), String.valueOf(shipped.low())));
        }
        var chart = HelmChart.render("1.37.1", "devicePlugin: {kubeletApi: dra}\nextender: {policy: {priority: {high: 500, low: -50}}}");
        assertThat(thresholds(chart.one(MutatingAdmissionPolicy.class, "hetgpu-dra-claim-level").getSpec().getVariables())).containsExactly("500", "-50");
        assertThat(thresholds(chart.one(ValidatingAdmissionPolicy.class, "hetgpu-dra-claim-level").getSpec().getVariables())).containsExactly("500", "-50");
    }

    /** On 1.36+ a pod names hetgpu-gpus-N, or any level of it, and gets the level of its spec.priority; the VAP then lets it in. */
    @Test
    void theMutationGivesAPodTheTemplateOfItsPriority() {
        var priorities = new LinkedHashMap<Integer, String>();
        priorities.put(5000, "high");
        priorities.put(1000, "high");
        priorities.put(999, "normal");
        priorities.put(0, "normal");
        priorities.put(null, "normal");
        priorities.put(-1, "low");
        priorities.put(-100, "low");
        for (var priority : priorities.entrySet()) {
            for (int count : COUNTS) {
                for (var written : List.of("hetgpu-gpus-" + count, "hetgpu-gpus-" + count + "-high", "hetgpu-gpus-" + count + "-low",
                        "hetgpu-gpus-" + count + "-normal")) {
                    var pod = pod(priority.getKey(), template("gpus", written), template("data", "scratch-disk"), named("shared", "team-claim"));
                    var mutated = (Mutated) mutation.evaluate(Request.create("pods", "", "system:serviceaccount:kube-system:job-controller", pod));
                    var claims = mutated.as(Pod.class).getSpec().getResourceClaims();
                    assertThat(claims).as("priority %s, %s", priority.getKey(), written).containsExactly(
                            template("gpus", "hetgpu-gpus-" + count + "-" + priority.getValue()), template("data", "scratch-disk"),
                            named("shared", "team-claim"));
                    assertThat(levels.evaluate(Request.create("pods", "", "alice", mutated.as(Pod.class)))).isEqualTo(new Allowed());
                }
            }
        }
        var plain = pod(1000, template("data", "scratch-disk"), named("shared", "hetgpu-gpus-2"));
        assertThat(mutation.evaluate(Request.create("pods", "", "alice", plain))).isEqualTo(new MutatingPolicyEvaluation.NotMatched());
        assertThat(mutation.evaluate(Request.create("pods", "", "alice", pod(1000)))).isEqualTo(new MutatingPolicyEvaluation.NotMatched());
    }

    /** Without the mutation (1.34, 1.35) the pod names its level; a wrong or missing one is refused with the name to use. */
    @Test
    void withoutTheMutationAPodNamesTheTemplateOfItsPriorityOrIsRefused() {
        for (int count : COUNTS) {
            for (var level : LEVELS) {
                var name = "hetgpu-gpus-" + count + "-" + level;
                int priority = switch (level) {
                    case "high" -> 1000;
                    case "low" -> -100;
                    default -> 0;
                };
                assertThat(levels.evaluate(create(pod(priority, template("gpus", name))))).as(name).isEqualTo(new Allowed());
                for (var other : LEVELS) {
                    if (!other.equals(level)) {
                        var wrong = "hetgpu-gpus-" + count + "-" + other;
                        assertThat(levels.evaluate(create(pod(priority, template("gpus", wrong))))).as(wrong + " at " + priority)
                                .isEqualTo(new Denied("spec.resourceClaims: claim template " + wrong + " is for another priority level; spec.priority "
                                        + priority + " gives " + level + ": name " + name + " (the level comes from the pod's PriorityClass)"));
                    }
                }
                assertThat(levels.evaluate(create(pod(priority, template("gpus", "hetgpu-gpus-" + count))))).isInstanceOfSatisfying(Denied.class,
                        d -> assertThat(d.message()).contains("hetgpu-gpus-" + count + " names no priority level").contains("name " + name + " "));
            }
        }
        // A pod without spec.priority (the Priority plugin off) is normal.
        assertThat(levels.evaluate(create(pod(null, template("gpus", "hetgpu-gpus-2-high"))))).isInstanceOf(Denied.class);
        assertThat(levels.evaluate(create(pod(null, template("gpus", "hetgpu-gpus-2-normal"))))).isEqualTo(new Allowed());
        // Names hetgpu has no template for, however long.
        for (var hostile : List.of("hetgpu-gpus-3-high", "hetgpu-gpus-1000-high", "hetgpu-gpus-8-urgent", "hetgpu-gpus-" + "9".repeat(200))) {
            assertThat(levels.evaluate(create(pod(1000, template("gpus", hostile))))).as(hostile).isInstanceOfSatisfying(Denied.class,
                    d -> assertThat(d.message()).startsWith("spec.resourceClaims: hetgpu has no claim template ").hasSizeLessThan(250));
        }
        // One bad claim among good ones is enough.
        assertThat(levels.evaluate(create(pod(-100, template("a", "hetgpu-gpus-1-low"), template("b", "hetgpu-gpus-8-high"))))).isInstanceOf(Denied.class);
        assertThat(levels.evaluate(create(pod(1000, template("data", "scratch-disk"))))).isEqualTo(new NotMatched());
        assertThat(levels.evaluate(create(pod(1000)))).isEqualTo(new NotMatched());
    }

    /** hetgpu's templates, created by anyone, pass; a template preferring among hetgpu's GPUs any other way is refused. */
    @Test
    void onlyHetgpusOwnTemplatesPreferAmongItsGpus() {
        assertThat(templates).hasSize(COUNTS.size() * LEVELS.size());
        for (var template : templates) {
            for (var creator : List.of("alice", "system:serviceaccount:ml:argocd", "kubernetes-admin")) {
                assertThat(preferences.evaluate(Request.create("resourceclaimtemplates", "", creator, template)))
                        .as(template.getMetadata().getName()).isEqualTo(new Allowed());
            }
        }
        var high2 = shipped("hetgpu-gpus-2-high");
        var hostile = new LinkedHashMap<String, ResourceClaimTemplate>();
        hostile.put("the newest-first list under a normal name", renamed(high2, "hetgpu-gpus-2-normal"));
        hostile.put("the newest-first list under a low name", renamed(high2, "hetgpu-gpus-2-low"));
        hostile.put("the newest-first list under a name of one's own", renamed(high2, "my-fast-gpus"));
        hostile.put("the oldest-first list under a high name", renamed(shipped("hetgpu-gpus-2-low"), "hetgpu-gpus-2-high"));
        hostile.put("a count the name does not say", subrequests(high2, s -> new DeviceSubRequestBuilder(s).withCount(8L).build()));
        hostile.put("a huge count", subrequests(high2, s -> new DeviceSubRequestBuilder(s).withCount(1_000_000_000L).build()));
        hostile.put("a band of its own", subrequests(high2, s -> new DeviceSubRequestBuilder(s).withSelectors(List.of())
                .addNewSelector().withNewCel().withExpression("device.attributes[\"gpu.hetgpu.io\"].tier >= 0").endCel().endSelector().build()));
        hostile.put("all the devices", subrequests(high2, s -> new DeviceSubRequestBuilder(s).withAllocationMode("All").build()));
        hostile.put("a foreign class in a band", subrequests(high2, s -> s.getName().equals("tier-45-83")
                ? new DeviceSubRequestBuilder(s).withDeviceClassName("gpu.nvidia.com").build() : s));
        hostile.put("an extra subrequest first", withSubrequests(high2, list -> {
            var extra = new DeviceSubRequestBuilder(list.getFirst()).withName("b200-only").build();
            list.addFirst(extra);
        }));
        hostile.put("a band dropped", withSubrequests(high2, list -> list.remove(3)));
        hostile.put("a band before its NVLink twin", withSubrequests(high2, list -> list.addFirst(list.remove(1))));
        hostile.put("a plain band narrowed", subrequests(high2, s -> s.getName().equals("tier-0-39") ? new DeviceSubRequestBuilder(s)
                .addNewSelector().withNewCel().withExpression("device.attributes[\"gpu.hetgpu.io\"].tier >= 100").endCel().endSelector().build() : s));
        hostile.put("the NVLink constraint dropped", constraints(high2, List.of()));
        // A constraint that no NVLink band can meet, or one on a plain band, skips that band to the next generation's.
        var low2 = shipped("hetgpu-gpus-2-low");
        hostile.put("a constraint of one's own besides", constraints(low2, java.util.stream.Stream.concat(
                low2.getSpec().getSpec().getDevices().getConstraints().stream(), java.util.stream.Stream.of(new DeviceConstraintBuilder()
                        .withRequests("gpus/tier-0-39").withMatchAttribute("gpu.hetgpu.io/noSuchAttribute").build())).toList()));
        hostile.put("the NVLink constraint on another size", constraints(low2, List.of(new DeviceConstraintBuilder(
                low2.getSpec().getSpec().getDevices().getConstraints().getFirst()).withMatchAttribute("gpu.hetgpu.io/nvlinkSet8").build())));
        hostile.put("the NVLink constraint on fewer bands", constraints(low2, List.of(new DeviceConstraintBuilder(
                low2.getSpec().getSpec().getDevices().getConstraints().getFirst()).withRequests("gpus/tier-40-44-nvlink").build())));
        hostile.put("the NVLink constraint on a plain band too", constraints(low2, List.of(new DeviceConstraintBuilder(
                low2.getSpec().getSpec().getDevices().getConstraints().getFirst()).addToRequests("gpus/tier-0-39").build())));
        hostile.put("a 1-GPU list with a constraint", constraints(shipped("hetgpu-gpus-1-low"), List.of(new DeviceConstraintBuilder()
                .withRequests("gpus/tier-0-24").withMatchAttribute("gpu.hetgpu.io/noSuchAttribute").build())));
        hostile.put("an admin's class of newer cards first, then hetgpu's any", withSubrequests(shipped("hetgpu-gpus-2-normal"),
                list -> list.set(0, new DeviceSubRequestBuilder(list.getFirst()).withDeviceClassName("h100-only").build())));
        hostile.put("another request name", new ResourceClaimTemplateBuilder(high2).editSpec().editSpec().editDevices().editFirstRequest()
                .withName("gpu").endRequest().endDevices().endSpec().endSpec().build());
        for (var entry : hostile.entrySet()) {
            assertThat(preferences.evaluate(Request.create("resourceclaimtemplates", "", "alice", entry.getValue()))).as(entry.getKey())
                    .isInstanceOfSatisfying(Denied.class, d -> assertThat(d.message())
                            .startsWith("spec.spec.devices.requests[").contains("].firstAvailable: ResourceClaimTemplate ")
                            .contains("which only hetgpu's own templates do"));
        }
        // An update that changes the spec is checked as a create; one that leaves it alone is not matched.
        assertThat(preferences.evaluate(Request.update("resourceclaimtemplates", "", "alice", shipped("hetgpu-gpus-2-normal"),
                hostile.get("the newest-first list under a normal name")))).isInstanceOf(Denied.class);
        assertThat(preferences.evaluate(Request.update("resourceclaimtemplates", "", "alice", high2, high2))).isEqualTo(new NotMatched());
        // Asking for hetgpu's GPUs without a preference is anyone's: exactly, with any selector; a preference among another driver's.
        assertThat(preferences.evaluate(Request.create("resourceclaimtemplates", "", "alice", exactTemplate("newest-only", 8,
                "device.attributes[\"gpu.hetgpu.io\"].tier >= 90")))).isEqualTo(new Allowed());
        // "One NVLink set, else any" orders no tiers: anyone's, under any name.
        assertThat(preferences.evaluate(Request.create("resourceclaimtemplates", "", "alice", renamed(shipped("hetgpu-gpus-4-normal"),
                "my-four-gpus")))).isEqualTo(new Allowed());
        assertThat(preferences.evaluate(Request.create("resourceclaimtemplates", "", "alice", subrequests(renamed(high2, "nvidia-newest-first"),
                s -> new DeviceSubRequestBuilder(s).withDeviceClassName("gpu.nvidia.com").build())))).isEqualTo(new Allowed());
    }

    /** A claim carries a preference only as the resourceclaim controller's copy of a pod's template. */
    @Test
    void aClaimPrefersAmongHetgpusGpusOnlyAsTheControllersCopyOfATemplate() {
        for (var template : templates) {
            var claim = claim(template);
            for (var controller : List.of(CONTROLLER, "system:kube-controller-manager")) {
                assertThat(preferences.evaluate(Request.create("resourceclaims", "", controller, claim))).as(template.getMetadata().getName())
                        .isEqualTo(new Allowed());
            }
            var written = preferences.evaluate(Request.create("resourceclaims", "", "alice", claim));
            if (template.getMetadata().getName().endsWith("-normal")) {
                assertThat(written).isEqualTo(new Allowed());
            } else {
                assertThat(written).as(template.getMetadata().getName()).isEqualTo(new Denied("spec.devices.requests[gpus].firstAvailable: a claim"
                        + " prefers among hetgpu's GPUs (gpu.hetgpu.io) only as the copy of one of hetgpu's claim templates, which a pod's priority"
                        + " chooses (not written by alice); name hetgpu-gpus-<count> in the pod, or ask for the GPUs with exactly"));
            }
        }
        // kube-scheduler writing the allocation, kubelet the status: the spec is unchanged, the policy not matched.
        var copy = claim(shipped("hetgpu-gpus-4-high"));
        assertThat(preferences.evaluate(Request.update("resourceclaims", "", "system:kube-scheduler", copy,
                new ResourceClaimBuilder(copy).editMetadata().addToFinalizers("resource.kubernetes.io/delete-protection").endMetadata().build())))
                .isEqualTo(new NotMatched());
    }

    /** The node agent writes only its own node's gpu.hetgpu.io slices; anyone else is not this policy's business. */
    @Test
    void theNodeAgentWritesOnlyItsOwnNodesSlices() {
        var policy = AdmissionPolicyEvaluation.of(overlay.one(ValidatingAdmissionPolicy.class, "hetgpu-node-agent-own-slices"));
        var agent = "system:serviceaccount:" + ExpectedDeployment.NAMESPACE + ":" + ExpectedDeployment.DEVICE_PLUGIN;
        var own = resourceSlice("gpu-1", HetgpuDra.DRIVER, "gpu-1");
        var onGpu1 = Map.of("authentication.kubernetes.io/node-name", List.of("gpu-1"));
        var onGpu2 = Map.of("authentication.kubernetes.io/node-name", List.of("gpu-2"));
        assertThat(policy.evaluate(new Request("CREATE", "resourceslices", "", agent, onGpu1, null, own))).isEqualTo(new Allowed());
        assertThat(policy.evaluate(new Request("UPDATE", "resourceslices", "", agent, onGpu1, own, own))).isEqualTo(new Allowed());
        assertThat(policy.evaluate(new Request("DELETE", "resourceslices", "", agent, onGpu1, own, null))).isEqualTo(new Allowed());
        assertThat(policy.evaluate(new Request("CREATE", "resourceslices", "", agent, onGpu2, null, own))).isEqualTo(new Denied(
                "spec.nodeName: hetgpu's node agent writes only the ResourceSlices of the node its pod runs on (gpu-2), not gpu-1"));
        assertThat(policy.evaluate(new Request("DELETE", "resourceslices", "", agent, onGpu2, own, null))).isInstanceOf(Denied.class);
        assertThat(policy.evaluate(new Request("CREATE", "resourceslices", "", agent, Map.of(), null, own))).isInstanceOfSatisfying(Denied.class,
                d -> assertThat(d.message()).contains("its token names no node"));
        for (var foreign : List.of(resourceSlice("gpu-1", "gpu.nvidia.com", "gpu-1"), resourceSlice("gpu-1", HetgpuDra.DRIVER, "gpu-2"))) {
            assertThat(policy.evaluate(new Request("CREATE", "resourceslices", "", agent, onGpu1, null, foreign))).isEqualTo(
                    new Denied("hetgpu's node agent writes only slices of driver gpu.hetgpu.io, in its node's pool"));
        }
        // Moving another node's slice to its own node is changing another node's slice.
        assertThat(policy.evaluate(new Request("UPDATE", "resourceslices", "", agent, onGpu1, resourceSlice("gpu-2", HetgpuDra.DRIVER, "gpu-2"), own)))
                .isEqualTo(new Denied("hetgpu's node agent changes only its own node's gpu.hetgpu.io slices"));
        assertThat(policy.evaluate(new Request("CREATE", "resourceslices", "", "system:serviceaccount:nvidia:kubelet-plugin", Map.of(), null,
                resourceSlice("gpu-2", "gpu.nvidia.com", "gpu-2")))).isEqualTo(new NotMatched());
    }

    private static io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice resourceSlice(String node, String driver, String pool) {
        return new ResourceSliceBuilder().withNewMetadata().withName(node + "-" + driver).endMetadata().withNewSpec().withDriver(driver)
                .withNodeName(node).withNewPool().withName(pool).withGeneration(1L).withResourceSliceCount(1L).endPool().endSpec().build();
    }

    /**
     * Every band's selector compiles in the allocator's CEL environment and selects exactly its tiers; the bands of one GPU
     * cover every tier once, and so do those of several, each with its NVLink-bound twin selecting the same.
     */
    @Test
    void theBandsCoverEveryTierOnce() {
        var selectors = new DeviceSelectors(DraLimits.DEFAULTS);
        var single = shipped("hetgpu-gpus-1-high").getSpec().getSpec().getDevices().getRequests().getFirst().getFirstAvailable();
        assertThat(single).hasSize(8);
        var several = shipped("hetgpu-gpus-2-high").getSpec().getSpec().getDevices().getRequests().getFirst().getFirstAvailable();
        assertThat(several).hasSize(8);
        for (int i = 0; i < several.size(); i += 2) {
            assertThat(several.get(i).getName()).isEqualTo(several.get(i + 1).getName() + "-nvlink");
            assertThat(several.get(i).getSelectors()).isEqualTo(several.get(i + 1).getSelectors());
        }
        var plainSeveral = several.stream().filter(s -> !s.getName().endsWith("-nvlink")).toList();
        for (var bands : List.of(single, plainSeveral)) {
            for (int tier = 0; tier <= 200; tier++) {
                var device = new io.hetgpu.kubescheduler.dra.Device("gpu-0",
                        Map.of("tier", new io.hetgpu.kubescheduler.dra.DeviceAttribute.IntValue((long) tier)), Map.of());
                int matching = 0;
                for (var band : bands) {
                    var expression = band.getSelectors().getFirst().getCel().getExpression();
                    assertThat(selectors.compileError(expression)).as(expression).isEmpty();
                    if (selectors.evaluate(expression, HetgpuDra.DRIVER, device) instanceof DeviceSelectors.Outcome.Matches(var matches) && matches) {
                        matching++;
                    }
                }
                assertThat(matching).as("bands selecting tier " + tier).isEqualTo(1);
            }
        }
    }

    /**
     * On the mixed node (2 A100 joined by NVLink, 2 T4), its devices published T4s first: first fit (hetgpu's normal
     * template) takes a T4, the high-priority template an A100, the low-priority one a T4 even with A100s listed first; a
     * high-priority pair takes the NVLink-joined A100s, a low-priority one the T4s (the oldest generation before a set of
     * a newer one), and four, of two generations, do not fit: a claim of several GPUs takes them from one generation.
     */
    @Test
    void theShippedTemplatesPreferAsTheirLevelSaysWhereFirstFitTakesWhatComesFirst() throws Exception {
        var topology = ProfileLoader.load("mixed").topology("mixed-1");
        var devices = HetgpuDra.devices(topology, CardCatalog.defaults(), Map.of());
        var modelOf = new LinkedHashMap<String, String>();
        devices.forEach(d -> modelOf.put(d.name(), ((HetgpuDra.Value.Text) d.attributes().get(HetgpuDra.MODEL)).value()));
        var t4First = slice(devices.reversed());
        var a100First = slice(devices);
        var classes = DraObjects.classes(List.of(overlay.one(DeviceClass.class, HetgpuDra.DRIVER)));
        var allocator = new StructuredAllocator(DraLimits.DEFAULTS);
        java.util.function.BiFunction<String, io.hetgpu.kubescheduler.dra.ResourceSlice, List<String>> models = (name, slice) -> {
            var claim = ((DraObjects.ClaimReading.Read) DraObjects.claim(claim(shipped(name)))).claim();
            var outcome = allocator.allocate("mixed-1", List.of(slice), classes, Set.of(), List.of(claim));
            if (!(outcome instanceof AllocationOutcome.Allocated allocated)) {
                return List.of();
            }
            return allocated.claims().getFirst().results().stream().map(r -> modelOf.get(r.device())).toList();
        };
        assertThat(models.apply("hetgpu-gpus-1-normal", t4First)).as("first fit").containsExactly("T4");
        assertThat(models.apply("hetgpu-gpus-1-high", t4First)).containsExactly("A100");
        assertThat(models.apply("hetgpu-gpus-1-normal", a100First)).as("first fit").containsExactly("A100");
        assertThat(models.apply("hetgpu-gpus-1-low", a100First)).containsExactly("T4");
        assertThat(models.apply("hetgpu-gpus-2-high", t4First)).containsExactly("A100", "A100");
        assertThat(models.apply("hetgpu-gpus-2-low", a100First)).as("the T4s, in no NVLink set, before the linked A100s")
                .containsExactly("T4", "T4");
        assertThat(models.apply("hetgpu-gpus-4-high", a100First)).as("no generation has four").isEmpty();
        assertThat(models.apply("hetgpu-gpus-4-normal", a100First)).as("no NVLink set of 4: any four").containsExactly("A100", "A100", "T4", "T4");
    }

    private static List<String> thresholds(List<Variable> variables) {
        var byName = new LinkedHashMap<String, String>();
        variables.forEach(v -> byName.put(v.getName(), v.getExpression()));
        return List.of(byName.get("highPriority"), byName.get("lowPriority"));
    }

    private static ResourceClaimTemplate constraints(ResourceClaimTemplate template, List<io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint> constraints) {
        return new ResourceClaimTemplateBuilder(template).editSpec().editSpec().editDevices().withConstraints(constraints).endDevices().endSpec()
                .endSpec().build();
    }

    private ResourceClaimTemplate shipped(String name) {
        return templates.stream().filter(t -> t.getMetadata().getName().equals(name)).findFirst().orElseThrow();
    }

    private static Request create(Pod pod) {
        return Request.create("pods", "", "alice", pod);
    }

    private static Pod pod(Integer priority, PodResourceClaim... claims) {
        return new PodBuilder().withNewMetadata().withName("train-0").withNamespace("ml").endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").withPriority(priority).withResourceClaims(claims)
                .addNewContainer().withName("train").withImage("train").endContainer().endSpec().build();
    }

    private static PodResourceClaim template(String name, String template) {
        return new PodResourceClaimBuilder().withName(name).withResourceClaimTemplateName(template).build();
    }

    private static PodResourceClaim named(String name, String claim) {
        return new PodResourceClaimBuilder().withName(name).withResourceClaimName(claim).build();
    }

    private static ResourceClaimTemplate renamed(ResourceClaimTemplate template, String name) {
        return new ResourceClaimTemplateBuilder(template).editMetadata().withName(name).withNamespace("ml").endMetadata().build();
    }

    private static ResourceClaimTemplate subrequests(ResourceClaimTemplate template, UnaryOperator<DeviceSubRequest> change) {
        return withSubrequests(template, list -> list.replaceAll(change));
    }

    private static ResourceClaimTemplate withSubrequests(ResourceClaimTemplate template, java.util.function.Consumer<List<DeviceSubRequest>> change) {
        var list = new ArrayList<>(template.getSpec().getSpec().getDevices().getRequests().getFirst().getFirstAvailable());
        change.accept(list);
        return new ResourceClaimTemplateBuilder(template).editSpec().editSpec().editDevices().editFirstRequest().withFirstAvailable(list)
                .endRequest().endDevices().endSpec().endSpec().build();
    }

    private static ResourceClaimTemplate exactTemplate(String name, long count, String selector) {
        return new ResourceClaimTemplateBuilder().withNewMetadata().withName(name).withNamespace("ml").endMetadata()
                .withNewSpec().withNewSpec().withNewDevices().addNewRequest().withName("gpus").withNewExactly()
                .withDeviceClassName(HetgpuDra.DRIVER).withAllocationMode("ExactCount").withCount(count)
                .addNewSelector().withNewCel().withExpression(selector).endCel().endSelector().endExactly().endRequest()
                .endDevices().endSpec().endSpec().build();
    }

    /** The claim the resourceclaim controller makes from a template for pod train-0. */
    private static ResourceClaim claim(ResourceClaimTemplate template) {
        return new ResourceClaimBuilder().withNewMetadata().withName("train-0-gpus-x7k2p").withNamespace("ml")
                .addToAnnotations("resource.kubernetes.io/pod-claim-name", "gpus").endMetadata()
                .withSpec(template.getSpec().getSpec()).build();
    }

    private static io.hetgpu.kubescheduler.dra.ResourceSlice slice(List<HetgpuDra.Device> devices) {
        var published = devices.stream().map(device -> {
            var attributes = new LinkedHashMap<String, io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute>();
            device.attributes().forEach((name, value) -> attributes.put(name, switch (value) {
                case HetgpuDra.Value.Text text -> new DeviceAttributeBuilder().withString(text.value()).build();
                case HetgpuDra.Value.Int number -> new DeviceAttributeBuilder().withInt(number.value()).build();
                case HetgpuDra.Value.Version version -> new DeviceAttributeBuilder().withVersion(version.value()).build();
            }));
            return new DeviceBuilder().withName(device.name()).withAttributes(attributes).withCapacity(Map.of(HetgpuDra.MEMORY,
                    new DeviceCapacityBuilder().withValue(new io.fabric8.kubernetes.api.model.Quantity(String.valueOf(device.memoryBytes()))).build()))
                    .build();
        }).toList();
        return DraObjects.slice(new ResourceSliceBuilder().withNewMetadata().withName("mixed-1-gpu.hetgpu.io").endMetadata()
                .withNewSpec().withDriver(HetgpuDra.DRIVER).withNodeName("mixed-1")
                .withNewPool().withName(HetgpuDra.pool("mixed-1")).withGeneration(1L).withResourceSliceCount(1L).endPool()
                .withDevices(published).endSpec().build());
    }
}
