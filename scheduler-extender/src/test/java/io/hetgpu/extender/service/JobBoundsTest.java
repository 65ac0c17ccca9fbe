package io.hetgpu.extender.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.TestTrust;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.ForwardingClusterView;
import io.hetgpu.extender.cluster.ListedClusterView;
import io.hetgpu.extender.cluster.PodBinder;
import io.hetgpu.extender.job.JobHolds;
import io.hetgpu.extender.job.JobSizes;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PlacementContext;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.FilterResult;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.tier.CardCatalog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * What keeps one job from taking the extender: a largest job size, a plan's time budget, refusals remembered while
 * nothing changes, a member pinned to its own node moved to it instead of a new plan, only the pods hetgpu's schedulers
 * will place counted as members, and a restart's re-seat that skips jobs bound by hand to nodes that do not exist.
 * Over a listed cluster of DGX A100 nodes (8 GPUs each), through the filter verb.
 */
class JobBoundsTest {

    private static final CardCatalog CATALOG = CardCatalog.defaults();
    private static final String RACK = "topology.hetgpu.io/rack";
    private final PodRequestParser parser = new PodRequestParser("nvidia.com/gpu", CATALOG);
    /** Each plan held, by job key. */
    private final List<String> held = new CopyOnWriteArrayList<>();
    private final List<String> ended = new CopyOnWriteArrayList<>();

    private static Node node(String name) {
        var topology = TestTopologies.dgxA100(name);
        return new NodeBuilder().withNewMetadata().withName(name).withLabels(Map.of("kubernetes.io/hostname", name, RACK, "r1"))
                .withAnnotations(Map.of(HetgpuKeys.ANNOTATION_INVENTORY, TestTopologies.inventory(topology),
                        HetgpuKeys.ANNOTATION_FREE, TestTopologies.allFree(topology)))
                .endMetadata().build();
    }

    private static List<Node> nodes(int count) {
        return IntStream.range(0, count).mapToObj(i -> node("n" + i)).toList();
    }

    private static PodBuilder member(String job, int index, int gpus, int size) {
        return new PodBuilder().withNewMetadata().withName(job + "-" + index).withNamespace("ml").withUid(job + "-uid-" + index)
                .withResourceVersion("1").withCreationTimestamp("2026-11-28T00:00:00Z")
                .withLabels(Map.of(HetgpuKeys.POD_JOB, job)).withAnnotations(Map.of(HetgpuKeys.POD_JOB_SIZE, Integer.toString(size)))
                .endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").addNewContainer().withName("main").withImage("train")
                .withNewResources().addToLimits(Map.of("nvidia.com/gpu", new Quantity(Integer.toString(gpus)))).endResources()
                .endContainer().endSpec();
    }

    private static List<Pod> job(String job, int size, int gpus) {
        return IntStream.range(0, size).mapToObj(i -> member(job, i, gpus, size).build()).toList();
    }

    private ExtenderService service(ClusterView view, WholeJobs.Settings settings) {
        return ExtenderVerbs.of(view, parser, new NodeStateFactory(CATALOG, RACK, "nvidia.com/gpu"), new PlacementPolicy(PolicySettings.DEFAULTS),
                (pod, table) -> { }, advice -> { }, PodBinder.NONE, report -> { }, BindVerb.Limits.DEFAULTS, settings).service();
    }

    private WholeJobs.Settings settings(int maxJobPods, Duration budget) {
        JobHolds.Listener listener = new JobHolds.Listener() {
            @Override
            public void ended(JobHolds.HeldPlan plan, JobHolds.Ending ending, String why) {
                ended.add(plan.jobKey() + " " + ending + ": " + why);
            }

            @Override
            public void held(JobHolds.HeldPlan plan) {
                held.add(plan.jobKey());
            }
        };
        return new WholeJobs.Settings(JobSizes.STATED_ONLY, Duration.ofMinutes(1), listener, maxJobPods, budget, Set.of("hetgpu-scheduler"));
    }

    private WholeJobs.Settings settings() {
        return settings(WholeJobs.Settings.DEFAULT_MAX_JOB_PODS, WholeJobs.Settings.DEFAULT_PLAN_BUDGET);
    }

    private static FilterResult filter(ExtenderService service, Pod pod, List<String> offered) {
        return service.filter(new ExtenderArgs(pod, null, offered));
    }

    private static String refusal(FilterResult result) {
        assertThat(result.nodeNames()).as("nodes kept").isEmpty();
        return result.failedAndUnresolvableNodes().values().iterator().next();
    }

    private static List<String> names(List<Node> nodes) {
        return nodes.stream().map(node -> node.getMetadata().getName()).toList();
    }

    @Test
    void aJobOfMorePodsThanTheLargestAllowedIsRefusedNamingTheLimitAndNeverPlanned() {
        var nodes = nodes(2);
        var pods = job("huge", 5, 1);
        var view = new CountingView(new ListedClusterView(nodes, pods, List.of(), List.of(), parser, RACK, TestTrust.trust()));
        var service = service(view, settings(4, WholeJobs.Settings.DEFAULT_PLAN_BUDGET));

        var reason = refusal(filter(service, pods.getFirst(), names(nodes)));

        assertThat(reason).contains("job \"ml/huge\" has 5 pods, more than the 4", "maxJobPods").contains("holds no GPU");
        assertThat(view.contexts.get()).as("plans begun").isZero();
        assertThat(held).isEmpty();
    }

    @Test
    void aPlanThatOutlastsItsBudgetIsRefusedSayingSoAndHoldsNothing() {
        var nodes = nodes(4);
        var pods = job("slow", 4, 2);
        var service = service(new ListedClusterView(nodes, pods, List.of(), List.of(), parser, RACK, TestTrust.trust()), settings(4096, Duration.ofNanos(1)));

        var reason = refusal(filter(service, pods.getFirst(), names(nodes)));

        assertThat(reason).contains("planning stopped after 0 of its 4 pods", "a plan may take 0 ms");
        assertThat(held).isEmpty();
        assertThat(service.jobs().gpusHeld()).isZero();
    }

    @Test
    void aJobThatCannotFitIsNotPlannedAgainUntilItsPodsOrTheNodesChange() {
        // 3 pods of 8 GPUs on 2 nodes of 8: no plan.
        var nodes = nodes(2);
        var pods = job("big", 3, 8);
        var listed = new ListedClusterView(nodes, pods, List.of(), List.of(), parser, RACK, TestTrust.trust());
        var view = new CountingView(listed);
        var service = service(view, settings());

        var first = refusal(filter(service, pods.get(0), names(nodes)));
        var second = refusal(filter(service, pods.get(1), names(nodes)));
        var third = refusal(filter(service, pods.get(2), names(nodes)));

        assertThat(first).contains("3 pods need 24 GPUs", "16 free in all");
        assertThat(List.of(second, third)).allSatisfy(reason -> assertThat(reason.substring(reason.indexOf("job ml/big")))
                .isEqualTo(first.substring(first.indexOf("job ml/big"))));
        assertThat(view.contexts.get()).as("plans begun for three filters of a job that cannot fit").isEqualTo(1);

        // A pod of the job changes (one fewer GPU asked): the job is planned again.
        listed.put(member("big", 2, 0, 3).build());
        var again = filter(service, pods.get(0), names(nodes));
        assertThat(view.contexts.get()).as("plans begun once a pod changed").isEqualTo(2);
        assertThat(again.nodeNames()).hasSize(1);
        assertThat(held).containsExactly("ml/big");
    }

    @Test
    void membersPinnedNodeByNodeAreMovedToTheirOwnNodeWithoutANewPlan() {
        // 8 pods of 4 GPUs, two pinned to each of 4 nodes of 8 GPUs: the cluster exactly full, so a member moved to its
        // node takes seats the plan gave others there, and those move on.
        var nodes = nodes(4);
        var pods = new ArrayList<Pod>();
        for (int i = 0; i < 8; i++) {
            pods.add(member("pinned", i, 4, 8).editSpec().withNodeSelector(Map.of("kubernetes.io/hostname", "n" + (i / 2))).endSpec().build());
        }
        var service = service(new ListedClusterView(nodes, pods, List.of(), List.of(), parser, RACK, TestTrust.trust()), settings());

        for (int i = 0; i < 8; i++) {
            // kube-scheduler offers each member the one node its selector allows.
            var answer = filter(service, pods.get(i), List.of("n" + (i / 2)));
            assertThat(answer.nodeNames()).as("member %d kept on its node", i).containsExactly("n" + (i / 2));
        }

        assertThat(held).as("plans made").containsExactly("ml/pinned");
        assertThat(ended).as("plans let go").isEmpty();
        var plan = service.jobs().holds().planOf("ml/pinned");
        assertThat(plan.holds()).allSatisfy(hold -> assertThat(hold.node())
                .isEqualTo("n" + Integer.parseInt(hold.podName().substring("pinned-".length())) / 2));
        assertThat(plan.gpus()).isEqualTo(32);
        // No device held twice on a node.
        for (var node : List.of("n0", "n1", "n2", "n3")) {
            var masks = plan.holds().stream().filter(hold -> hold.node().equals(node)).mapToLong(JobHolds.Hold::mask).toArray();
            assertThat(masks).hasSize(2);
            assertThat(masks[0] & masks[1]).as("devices on %s held twice", node).isZero();
        }
    }

    @Test
    void onlyPodsHetgpusSchedulersWillPlaceCountAsMembers() {
        var nodes = nodes(2);
        var ours = member("mixed", 0, 1, 3).build();
        var elsewhere = member("mixed", 1, 1, 3).editSpec().withSchedulerName("nobody").endSpec().build();
        var gated = member("mixed", 2, 1, 3).editSpec().addNewSchedulingGate("example.com/quota").endSpec().build();
        var service = service(new ListedClusterView(nodes, List.of(ours, elsewhere, gated), List.of(), List.of(), parser, RACK, TestTrust.trust()), settings());

        var reason = refusal(filter(service, ours, names(nodes)));

        assertThat(reason).contains("job ml/mixed: 1 of its 3 pods exist", "holds no GPU");
        assertThat(held).isEmpty();
    }

    @Test
    void aRestartSeatsTheHalfBoundJobsOnRealNodesAndSkipsThoseBoundByHandToNoNode() {
        var nodes = nodes(2);
        var pods = new ArrayList<Pod>();
        // 200 jobs whose bound pod names a node that does not exist, each with a pod waiting.
        for (int j = 0; j < 200; j++) {
            pods.add(member("fake" + j, 0, 1, 2).editSpec().withNodeName("no-such-node").endSpec().build());
            pods.add(member("fake" + j, 1, 1, 2).build());
        }
        // One job half-bound on n0, its second pod waiting.
        pods.add(member("real", 0, 4, 2).editSpec().withNodeName("n0").endSpec().build());
        pods.add(member("real", 1, 4, 2).build());
        var alone = new PodBuilder().withNewMetadata().withName("solo").withNamespace("ml").withUid("solo-uid").endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").addNewContainer().withName("main").withImage("serve")
                .withNewResources().addToLimits(Map.of("nvidia.com/gpu", new Quantity("1"))).endResources().endContainer().endSpec().build();
        var service = service(new ListedClusterView(nodes, pods, List.of(), List.of(), parser, RACK, TestTrust.trust()), settings());

        // Filters of a pod of no job, as after a restart, go on with the re-seat a slice at a time until it is done.
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            assertThat(filter(service, alone, names(nodes)).nodeNames()).isNotEmpty();
            return service.jobs().reseated();
        });

        assertThat(held).as("jobs re-seated").containsExactly("ml/real");
    }

    /** A view that counts the contexts read: a plan reads one for its first member, and nothing else reads any. */
    private static final class CountingView extends ForwardingClusterView {
        final AtomicInteger contexts = new AtomicInteger();

        CountingView(ClusterView view) {
            super(view);
        }

        @Override
        public PlacementContext contextOf(PodRequest pod) {
            contexts.incrementAndGet();
            return super.contextOf(pod);
        }
    }
}
