package io.hetgpu.extender.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.hetgpu.extender.BindingApiServer;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.cluster.ApiServerPodBinder;
import io.hetgpu.extender.http.ExtenderMetrics;
import io.hetgpu.extender.cluster.InformerClusterView;
import io.hetgpu.extender.job.JobHolds;
import io.hetgpu.extender.job.JobSizes;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.JobHeadroom;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.ExtenderBindingArgs;
import io.hetgpu.extender.wire.FilterResult;
import io.hetgpu.gpu.inventory.DeviceAssignment;
import io.hetgpu.gpu.inventory.DeviceAssignmentCodec;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.http.ExtenderServer;
import io.hetgpu.extender.http.ServerOptions;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Whole jobs through the verbs, over informers and an API server that binds: the deadlock of two 8-GPU jobs on two
 * 4-GPU nodes does not happen (one job is placed whole, the other waits holding nothing), members are steered to their
 * seats and bound with the seats' devices, other pods see the seats as taken, and a plan whose deadline passes lets go.
 */
class WholeJobsTest {

    private static final CardCatalog CATALOG = CardCatalog.defaults();
    private final BindingApiServer api = BindingApiServer.start();
    private final PodRequestParser parser = new PodRequestParser("nvidia.com/gpu", CATALOG);
    /** The key the bind verb signs with and the view trusts records by, as in one extender. */
    private final io.hetgpu.extender.trust.RecordTrust trust = io.hetgpu.extender.TestTrust.trust();
    private final InformerClusterView view = new InformerClusterView(api.client(), parser, "topology.hetgpu.io/rack", trust);
    private final List<String> ended = new CopyOnWriteArrayList<>();
    /** Each pod whose scores the verbs explained, and the node they rank first. */
    private final List<String> explained = new CopyOnWriteArrayList<>();
    private final DeviceAssignmentCodec codec = new DeviceAssignmentCodec();

    @AfterEach
    void stop() {
        view.close();
        api.close();
    }

    private ExtenderVerbs verbs(Duration deadline) {
        return verbs(deadline, PolicySettings.DEFAULTS);
    }

    private ExtenderVerbs verbs(Duration deadline, PolicySettings settings) {
        return verbs(deadline, settings, new NodeStateFactory(CATALOG, "topology.hetgpu.io/rack", "nvidia.com/gpu"));
    }

    private ExtenderVerbs verbs(Duration deadline, PolicySettings settings, NodeStateFactory nodes) {
        return ExtenderVerbs.of(view, parser, nodes, new PlacementPolicy(settings),
                (pod, table) -> explained.add(pod.name() + " -> " + table.best().node()), advice -> { },
                new ApiServerPodBinder(api.client()), report -> { }, BindVerb.Limits.DEFAULTS,
                new WholeJobs.Settings(JobSizes.STATED_ONLY, deadline, (plan, ending, why) -> ended.add(plan.jobKey() + " " + ending)), trust);
    }

    private void node(String name) {
        var topology = TestTopologies.v100Pcie(name, 4);
        api.client().nodes().resource(new NodeBuilder().withNewMetadata().withName(name)
                .withAnnotations(Map.of(HetgpuKeys.ANNOTATION_INVENTORY, TestTopologies.inventory(topology),
                        HetgpuKeys.ANNOTATION_FREE, TestTopologies.allFree(topology)))
                .endMetadata().build()).create();
    }

    private Pod member(String job, String name, int gpus, int size) {
        return api.client().pods().inNamespace("ml").resource(new PodBuilder()
                .withNewMetadata().withName(name).withNamespace("ml")
                .withLabels(Map.of(HetgpuKeys.POD_JOB, job)).withAnnotations(Map.of(HetgpuKeys.POD_JOB_SIZE, Integer.toString(size)))
                .endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").addNewContainer().withName("main").withImage("train")
                .withNewResources().addToLimits(Map.of("nvidia.com/gpu", new Quantity(Integer.toString(gpus)))).endResources()
                .endContainer().endSpec().build()).create();
    }

    private Pod alone(String name, int gpus) {
        return api.client().pods().inNamespace("ml").resource(new PodBuilder()
                .withNewMetadata().withName(name).withNamespace("ml").endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").addNewContainer().withName("main").withImage("serve")
                .withNewResources().addToLimits(Map.of("nvidia.com/gpu", new Quantity(Integer.toString(gpus)))).endResources()
                .endContainer().endSpec().build()).create();
    }

    private void synced(int pods) {
        view.start().join();
        await().atMost(Duration.ofSeconds(10)).until(() -> view.synced() && view.nodes().size() == 2
                && api.client().pods().inNamespace("ml").list().getItems().stream().allMatch(pod -> view.podByUid(pod.getMetadata().getUid()) != null)
                && api.client().pods().inNamespace("ml").list().getItems().size() == pods);
    }

    /** Job a's two pods of 2 GPUs, on nodes n1 and n2 of 4 GPUs each, the informers synced. */
    private record JobA(Pod a0, Pod a1) {
    }

    private JobA twoNodesAndJobA() {
        node("n1");
        node("n2");
        var job = new JobA(member("a", "a-0", 2, 2), member("a", "a-1", 2, 2));
        synced(2);
        return job;
    }

    private static ExtenderArgs askAbout(Pod pod) {
        return new ExtenderArgs(pod, null, List.of("n1", "n2"));
    }

    /** The node kube-scheduler picks from a filter answer: the one kept (the test fails when several are). */
    private static String keptNode(FilterResult result) {
        assertThat(result.error()).isEmpty();
        assertThat(result.nodeNames()).hasSize(1);
        return result.nodeNames().getFirst();
    }

    private String bind(ExtenderVerbs verbs, Pod pod, String node) {
        var uid = pod.getMetadata().getUid();
        var error = verbs.binding().bind(new ExtenderBindingArgs(pod.getMetadata().getName(), "ml", uid, node)).error();
        if (error.isEmpty()) {
            // The next decision waits for the informer, as kube-scheduler's next cycle does in effect.
            await().atMost(Duration.ofSeconds(10)).until(() -> node.equals(view.podByUid(uid).getSpec().getNodeName()));
        }
        return error;
    }

    private List<String> devicesOf(String pod) throws Exception {
        var record = api.client().pods().inNamespace("ml").withName(pod).get().getMetadata().getAnnotations().get(HetgpuKeys.POD_GPU_DEVICES);
        return codec.decode(record).devices();
    }

    @Test
    void twoEightGpuJobsOnTwoFourGpuNodesPlaceOneJobWholeAndTheOtherWaitsHoldingNothing() throws Exception {
        node("n1");
        node("n2");
        var a0 = member("a", "a-0", 4, 2);
        var b0 = member("b", "b-0", 4, 2);
        var a1 = member("a", "a-1", 4, 2);
        var b1 = member("b", "b-1", 4, 2);
        synced(4);
        var verbs = verbs(Duration.ofMinutes(1));

        // kube-scheduler's queue: a-0, b-0, a-1, b-1, each filtered then bound before the next.
        var a0Node = keptNode(verbs.service().filter(askAbout(a0)));
        assertThat(bind(verbs, a0, a0Node)).isEmpty();
        var b0Answer = verbs.service().filter(askAbout(b0));
        var a1Node = keptNode(verbs.service().filter(askAbout(a1)));
        assertThat(bind(verbs, a1, a1Node)).isEmpty();
        var b1Answer = verbs.service().filter(askAbout(b1));

        assertThat(a1Node).isNotEqualTo(a0Node);
        assertThat(b0Answer.nodeNames()).isEmpty();
        assertThat(b0Answer.failedAndUnresolvableNodes().values()).singleElement().asString()
                .contains("job ml/b: 2 pods need 8 GPUs (2 × 4)").contains("no GPU is held for it");
        assertThat(b1Answer.nodeNames()).isEmpty();
        assertThat(devicesOf("a-0")).hasSize(4);
        assertThat(devicesOf("a-1")).hasSize(4);
        assertThat(api.client().pods().inNamespace("ml").withName("b-0").get().getSpec().getNodeName()).isNull();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            verbs.service().filter(askAbout(b1));
            assertThat(ended).containsExactly("ml/a COMPLETE");
        });
        assertThat(verbs.service().jobs().holds().plans()).isEmpty();
    }

    @Test
    void aFilterWouldPlanOnlyForAMemberOfAJobThatHoldsNoPlan() {
        // The HTTP front answers a small filter on its event loop unless it would plan a job over the whole cluster.
        node("n1");
        node("n2");
        var a0 = member("a", "a-0", 4, 2);
        var a1 = member("a", "a-1", 4, 2);
        var alone = member("solo", "solo-0", 1, 1);
        synced(3);
        var verbs = verbs(Duration.ofMinutes(1));

        assertThat(verbs.service().jobs().wouldPlan(a0)).isTrue();
        assertThat(verbs.service().jobs().wouldPlan(alone)).as("a job of one is placed alone").isFalse();
        keptNode(verbs.service().filter(askAbout(a0)));
        assertThat(verbs.service().jobs().wouldPlan(a1)).as("its job is planned: the member is steered").isFalse();
    }

    @Test
    void aPodOfAnotherJobOrOfNoneSeesThePlannedSeatsAsTaken() {
        node("n1");
        node("n2");
        var a0 = member("a", "a-0", 4, 2);
        member("a", "a-1", 4, 2);
        var solo = alone("serve", 1);
        synced(3);
        var verbs = verbs(Duration.ofMinutes(1));

        keptNode(verbs.service().filter(askAbout(a0)));
        var soloAnswer = verbs.service().filter(askAbout(solo));

        // Job a's plan holds all 8 GPUs (4 on each node) though nothing is bound yet.
        assertThat(soloAnswer.nodeNames()).isEmpty();
        assertThat(soloAnswer.failedNodes()).containsOnlyKeys("n1", "n2");
        var bindSolo = verbs.binding().bind(new ExtenderBindingArgs("serve", "ml", solo.getMetadata().getUid(), "n1"));
        assertThat(bindSolo.error()).startsWith("node n1 can no longer take pod ml/serve");
    }

    @Test
    void aRestartedExtenderSeatsTheWaitingPodsOfAHalfBoundJobBeforeItAnswersAnyOtherPod() throws Exception {
        node("n1");
        node("n2");
        var a0 = member("a", "a-0", 4, 2);
        var a1 = member("a", "a-1", 4, 2);
        synced(2);
        var stopped = verbs(Duration.ofMinutes(1));
        var bound = keptNode(stopped.service().filter(askAbout(a0)));
        assertThat(bind(stopped, a0, bound)).isEmpty();
        // The extender restarts: its plan, which held the other node for a-1, lived in its memory only. A pod of no job,
        // first in kube-scheduler's queue, asks the restarted extender first.
        var solo = alone("serve", 4);
        await().atMost(Duration.ofSeconds(10)).until(() -> view.podByUid(solo.getMetadata().getUid()) != null);
        var restarted = verbs(Duration.ofMinutes(1));

        var soloAnswer = restarted.service().filter(askAbout(solo));
        var seat = keptNode(restarted.service().filter(askAbout(a1)));

        assertThat(soloAnswer.nodeNames()).as("free GPUs are a-1's seat").isEmpty();
        assertThat(seat).isNotEqualTo(bound);
        assertThat(bind(restarted, a1, seat)).isEmpty();
    }

    @Test
    void aMemberIsBoundOnlyToItsSeatWithTheSeatsDevices() throws Exception {
        var job = twoNodesAndJobA();
        var a0 = job.a0();
        var a1 = job.a1();
        var verbs = verbs(Duration.ofMinutes(1));
        var seat = keptNode(verbs.service().filter(askAbout(a0)));
        var other = seat.equals("n1") ? "n2" : "n1";
        var held = verbs.service().jobs().holds().holdOf(a0.getMetadata().getUid());

        var elsewhere = bind(verbs, a0, other);
        var there = bind(verbs, a0, seat);

        assertThat(elsewhere).isEqualTo("pod ml/a-0 has its seat on node " + seat + " in its job's plan, not on " + other + ": not bound");
        assertThat(there).isEmpty();
        assertThat(devicesOf("a-0")).isEqualTo(held.devices());
        // The two pods of 2 GPUs are planned on one node.
        assertThat(keptNode(verbs.service().filter(askAbout(a1)))).isEqualTo(seat);
        var priorities = verbs.service().prioritize(askAbout(a1)).priorities();
        assertThat(priorities).extracting(p -> p.host() + "=" + p.score()).containsExactlyInAnyOrder(seat + "=10", other + "=0");
    }

    @Test
    void aRefusedJobsReasonSaysWhatItNeedsWhatIsFreeAndThatNothingIsHeldBeforeTheDetailACutWouldLose() {
        node("n1");
        node("n2");
        // Names as long as Kubernetes allows a label value: the detail, which names the pod that fits nowhere, outgrows the
        // 300 characters a node's reason is cut to.
        var job = "b".repeat(40);
        var b0 = member(job, "b-master-" + "x".repeat(54), 4, 3);
        member(job, "b-worker-0-" + "y".repeat(52), 4, 3);
        member(job, "b-worker-1-" + "z".repeat(52), 4, 3);
        synced(3);
        var verbs = verbs(Duration.ofMinutes(1));

        var answer = verbs.service().filter(askAbout(b0));

        assertThat(answer.nodeNames()).isEmpty();
        assertThat(answer.failedAndUnresolvableNodes().values()).singleElement().asString()
                .contains("job ml/" + job + ": 3 pods need 12 GPUs (3 × 4), 8 free in all, at most 4 on one node; no GPU is held for it; ");
    }

    @Test
    void everyMemberOfAPlannedJobIsExplainedByItsScoresThoughKubeSchedulerAsksNoPrioritizeOfIt() {
        var job = twoNodesAndJobA();
        var verbs = verbs(Duration.ofMinutes(1));

        var seat = keptNode(verbs.service().filter(askAbout(job.a0())));

        // Kept on one node, a member is not prioritized: its job's plan says why it goes there, as prioritize would.
        assertThat(explained).containsExactlyInAnyOrder("a-0 -> " + seat, "a-1 -> " + seat);
    }

    @Test
    void theGaugeOfGpusHeldByPlansCountsNoMemberOnceItIsBound() throws Exception {
        var job = twoNodesAndJobA();
        var a0 = job.a0();
        var a1 = job.a1();
        var verbs = verbs(Duration.ofMinutes(1));
        var seat = keptNode(verbs.service().filter(askAbout(a0)));
        assertThat(verbs.service().jobs().gpusHeld()).as("held for both members, none bound").isEqualTo(4);
        assertThat(bind(verbs, a0, seat)).isEmpty();
        assertThat(bind(verbs, a1, keptNode(verbs.service().filter(askAbout(a1))))).isEmpty();

        // No filter has come since a-1 was bound, so nothing has swept its hold yet: the gauge reads zero all the same.
        assertThat(verbs.service().jobs().holds().plans()).isNotEmpty();
        assertThat(verbs.service().jobs().gpusHeld()).isZero();
    }

    @Test
    void aJobWaitsUntilAllItsPodsExist() {
        node("n1");
        node("n2");
        var a0 = member("a", "a-0", 1, 3);
        member("a", "a-1", 1, 3);
        synced(2);
        var verbs = verbs(Duration.ofMinutes(1));

        var answer = verbs.service().filter(askAbout(a0));

        assertThat(answer.nodeNames()).isEmpty();
        assertThat(answer.failedAndUnresolvableNodes().values()).singleElement().asString()
                .endsWith("job ml/a: 2 of its 3 pods exist (hetgpu.io/job); it is placed once all exist, and holds no GPU until then");
        assertThat(verbs.service().jobs().holds().plans()).isEmpty();
    }

    @Test
    void aPlanWhoseDeadlinePassesLetsItsGpusGoAndTheJobIsPlannedAgain() {
        node("n1");
        node("n2");
        var a0 = member("a", "a-0", 4, 2);
        member("a", "a-1", 4, 2);
        var solo = alone("serve", 4);
        synced(3);
        var verbs = verbs(Duration.ofMillis(300));

        keptNode(verbs.service().filter(askAbout(a0)));
        // Nothing of job a is bound: once the deadline passes, its seats are free for anyone.
        await().atMost(Duration.ofSeconds(10)).until(() -> !verbs.service().filter(askAbout(solo)).nodeNames().isEmpty());

        assertThat(ended).containsExactly("ml/a EXPIRED");
        assertThat(verbs.service().jobs().holds().plans()).isEmpty();
        keptNode(verbs.service().filter(askAbout(a0)));
        assertThat(verbs.service().jobs().holds().plans()).singleElement().extracting(JobHolds.HeldPlan::jobKey).isEqualTo("ml/a");
    }

    /**
     * A filter that plans a whole job weighs every node of the cluster for each of its pods: it runs on the worker pool
     * wherever the probes come, so that neither a probe nor another pod's filter waits behind it.
     */
    @Test
    void aFilterThatPlansAJobRunsOnThePoolWhereverTheProbesCome() throws Exception {
        var a = twoNodesAndJobA();
        var threads = new CopyOnWriteArrayList<String>();
        // Each plan ends as soon as it is made, so that each filter plans the job again; its members are told on the thread that plans.
        var verbs = ExtenderVerbs.of(view, parser, new NodeStateFactory(CATALOG, "topology.hetgpu.io/rack", "nvidia.com/gpu"),
                new PlacementPolicy(PolicySettings.DEFAULTS), (pod, table) -> threads.add(Thread.currentThread().getName()), advice -> { },
                new ApiServerPodBinder(api.client()), report -> { }, BindVerb.Limits.DEFAULTS,
                new WholeJobs.Settings(JobSizes.STATED_ONLY, Duration.ofNanos(1), (plan, ending, why) -> { }));
        var body = "{\"Pod\":" + KubeJson.MAPPER.writeValueAsString(a.a0()) + ",\"NodeNames\":[\"n1\",\"n2\"]}";
        var vertx = Vertx.vertx();
        var where = new ArrayList<String>();
        try (var client = HttpClient.newHttpClient()) {
            var plain = new ServerOptions("127.0.0.1", 0, 1024 * 1024, null, null);
            for (var options : List.of(plain, plain.withMetrics("127.0.0.1", 0))) {
                var server = ExtenderServer.start(vertx, options, verbs, new ExtenderMetrics())
                        .toCompletionStage().toCompletableFuture().join();
                try {
                    threads.clear();
                    var answer = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/filter"))
                            .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
                    assertThat(answer.statusCode()).isEqualTo(200);
                    assertThat(answer.body()).contains("\"NodeNames\":[\"n");
                    assertThat(threads).as("the job's two members planned").hasSize(2);
                    where.add(threads.getFirst().replaceAll("-\\d+.*", ""));
                } finally {
                    server.close();
                }
            }
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().join();
        }

        assertThat(where).containsExactly("hetgpu-verbs", "hetgpu-verbs");
    }

    /**
     * Plans take the nodes' states from the cluster snapshot as long as it is unchanged, but a bind in flight holds its
     * devices only while its record is fresh: the record ages with no event to make a new snapshot.
     */
    @Test
    void aBindInFlightKeepsAJobFromItsDevicesOnlyWhileItsRecordIsFresh() {
        node("n1");
        node("n2");
        var n1 = TestTopologies.v100Pcie("n1", 4);
        var a0 = member("a", "a-0", 4, 2);
        member("a", "a-1", 4, 2);
        // Another replica is binding a pod to all of n1: its record is written, its Binding not yet.
        var other = alone("other", 4);
        var record = io.hetgpu.extender.TestTrust.signed(new DeviceAssignment("n1",
                List.of(n1.device(0).uuid(), n1.device(1).uuid(), n1.device(2).uuid(), n1.device(3).uuid()), Instant.now()),
                other.getMetadata().getUid());
        api.client().pods().inNamespace("ml").resource(new PodBuilder(other).editMetadata()
                .addToAnnotations(HetgpuKeys.POD_GPU_DEVICES, record).endMetadata().build()).update();
        synced(3);
        var verbs = verbs(WholeJobs.Settings.DEFAULT_DEADLINE, PolicySettings.DEFAULTS,
                new NodeStateFactory(CATALOG, "topology.hetgpu.io/rack", "nvidia.com/gpu", Duration.ofSeconds(3), Clock.systemUTC()));

        assertThat(verbs.service().filter(askAbout(a0)).nodeNames()).isEmpty();
        assertThat(verbs.service().jobs().holds().plans()).isEmpty();
        // Nothing changes on the API server: the record only grows old, and then holds nothing.
        await().atMost(Duration.ofSeconds(15)).until(() -> !verbs.service().filter(askAbout(a0)).nodeNames().isEmpty());
        assertThat(verbs.service().jobs().holds().plans()).singleElement().extracting(JobHolds.HeldPlan::jobKey).isEqualTo("ml/a");
    }

    @Test
    void aPlanBrokenByAPodBoundBehindItsBackIsMadeAgainAroundIt() throws Exception {
        node("n1");
        node("n2");
        var a0 = member("a", "a-0", 4, 2);
        member("a", "a-1", 4, 2);
        synced(2);
        var verbs = verbs(Duration.ofMinutes(1));
        var seat = keptNode(verbs.service().filter(askAbout(a0)));
        // Another scheduler binds a pod of 2 GPUs onto a-0's seat (its GPUs then show taken in the free list).
        var intruder = alone("intruder", 2);
        await().until(() -> view.podByUid(intruder.getMetadata().getUid()) != null);
        api.client().pods().inNamespace("ml").withName("intruder").edit(pod -> new PodBuilder(pod).editSpec().withNodeName(seat).endSpec().build());
        await().atMost(Duration.ofSeconds(10)).until(() -> view.boundPods(seat).size() == 1);

        var again = verbs.service().filter(askAbout(a0));

        // 8 GPUs were needed and 6 are left: the job cannot be placed whole now, and holds nothing.
        assertThat(again.nodeNames()).isEmpty();
        assertThat(again.failedAndUnresolvableNodes().values()).singleElement().asString().contains("job ml/a: 2 pods need 8 GPUs");
        assertThat(ended).containsExactly("ml/a RELEASED");
        assertThat(verbs.service().jobs().holds().plans()).isEmpty();
    }

    @Test
    void aMemberLostAfterBindingIsReplacedAroundTheOnesStillBoundWithoutTouchingThem() throws Exception {
        var job = twoNodesAndJobA();
        var a0 = job.a0();
        var a1 = job.a1();
        var verbs = verbs(Duration.ofMinutes(1));
        var seat = keptNode(verbs.service().filter(askAbout(a0)));
        assertThat(bind(verbs, a0, seat)).isEmpty();
        assertThat(bind(verbs, a1, keptNode(verbs.service().filter(askAbout(a1))))).isEmpty();
        var a0Devices = devicesOf("a-0");

        // a-1 is evicted; its operator creates it again.
        api.client().pods().inNamespace("ml").withName("a-1").delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> view.podByUid(a1.getMetadata().getUid()) == null);
        var again = member("a", "a-1b", 2, 2);
        await().atMost(Duration.ofSeconds(10)).until(() -> view.podByUid(again.getMetadata().getUid()) != null);

        assertThat(keptNode(verbs.service().filter(askAbout(again)))).as("next to the member still bound").isEqualTo(seat);
        assertThat(verbs.service().jobs().holds().plans()).singleElement()
                .satisfies(plan -> assertThat(plan.holds()).extracting(JobHolds.Hold::podName).containsExactly("a-1b"));
        assertThat(bind(verbs, again, seat)).isEmpty();
        assertThat(devicesOf("a-0")).isEqualTo(a0Devices);
        assertThat(devicesOf("a-1b")).doesNotContainAnyElementsOf(a0Devices);
    }

    @Test
    void aJobBelowHighPriorityWaitsForTheHeadroomHoldingNothingWhileAnUrgentJobStarts() {
        node("n1");
        node("n2");
        running("sweep", "n2", 2, "", 5);
        var a0 = member("a", "a-0", 2, 2);
        member("a", "a-1", 2, 2);
        var u0 = urgent("u", "u-0", 2, 2);
        urgent("u", "u-1", 2, 2);
        synced(5);
        var verbs = verbs(Duration.ofMinutes(1), PolicySettings.DEFAULTS.withJobHeadroom(new JobHeadroom(4)));
        var metrics = new ExtenderMetrics();
        metrics.watchJobHeadroom(verbs.service().jobs());

        var waits = verbs.service().filter(askAbout(a0));
        assertThat(waits.nodeNames()).isEmpty();
        assertThat(waits.failedAndUnresolvableNodes().values()).singleElement().asString()
                .contains("job ml/a: 2 pods need 4 GPUs, 6 free in all; a job below high priority starts once 4 more")
                .endsWith("no GPU is held for it");
        assertThat(verbs.service().jobs().holds().plans()).isEmpty();

        // 6 free, 4 needed: an urgent job starts whatever it leaves (it preempts where the cluster is full).
        assertThat(verbs.service().filter(askAbout(u0)).nodeNames()).hasSize(1);
        assertThat(verbs.service().jobs().holds().plans()).singleElement().satisfies(plan -> assertThat(plan.jobKey()).isEqualTo("ml/u"));
        // The urgent job's plan holds its 4 GPUs for its pods not bound yet: they are not free for job a's headroom.
        assertThat(verbs.service().filter(askAbout(a0)).failedAndUnresolvableNodes().values()).singleElement().asString()
                .contains("job ml/a: 2 pods need 4 GPUs, 2 free in all");
        assertThat(metrics.scrape()).contains("hetgpu_extender_job_headroom_waits_total 2.0");
    }

    @Test
    void aLonePodOfSeveralGpusBelowHighPriorityWaitsForTheHeadroomBehindABacklogAndNothingIsEvictedForItWhileItWaits() {
        node("n1");
        node("n2");
        var sweep = running("sweep", "n2", 3, "", 5);
        var wide = alone("wide", 4);
        var small = alone("small-0", 1);
        alone("small-1", 1);
        var pair = alone("pair-0", 2);
        var urgentWide = api.client().pods().inNamespace("ml").withName(alone("urgent-wide", 4).getMetadata().getName())
                .edit(p -> new PodBuilder(p).editSpec().withPriority(1000).endSpec().build());
        synced(6);
        var verbs = verbs(Duration.ofMinutes(1), PolicySettings.DEFAULTS.withJobHeadroom(new JobHeadroom(2)));
        var metrics = new ExtenderMetrics();
        metrics.watchJobHeadroom(verbs.service().jobs());

        // 5 free (4 on n1): the wide pod would leave 1 of the 2 kept, but smaller pods wait for 4, under three rooms (6).
        assertThat(verbs.service().filter(askAbout(wide)).nodeNames()).containsExactly("n1");
        var pairB = alone("pair-1", 2);
        await().atMost(Duration.ofSeconds(10)).until(() -> view.podByUid(pairB.getMetadata().getUid()) != null);

        // Now they wait for 6: the wide pod leaves them the room.
        var waits = verbs.service().filter(askAbout(wide));
        assertThat(waits.nodeNames()).isEmpty();
        assertThat(waits.failedNodes().get("n1")).contains("it needs 4 GPUs, 5 free in all, and pods of fewer GPUs wait for 6; a pod of "
                + "several GPUs below high priority starts once 2 more than it needs are free, or once the smaller pods waiting need fewer than 6");
        assertThat(metrics.scrape()).contains("hetgpu_extender_job_headroom_waits_total 1.0");
        assertThat(verbs.service().filter(askAbout(pair)).nodeNames()).as("leaves 3 of the 2 kept").hasSize(1);
        assertThat(verbs.service().filter(askAbout(small)).nodeNames()).as("one GPU: the small work the room lets through").hasSize(2);
        assertThat(verbs.service().filter(askAbout(urgentWide)).nodeNames()).as("urgent: starts whatever it leaves").containsExactly("n1");

        // Offered the sweep as a victim (as kube-scheduler would offer a lower-priority pod), the verb keeps no node: the
        // pod would still wait for room after the eviction.
        var result = verbs.preemption().answer(new io.hetgpu.extender.wire.ExtenderPreemptionArgs(wide, null, Map.of("n2", victims(sweep))));
        assertThat(result.nodeNameToMetaVictims()).isEmpty();
    }

    @Test
    void aJobWithAMemberOnANodeIsNeverHeldBackForRoomItWouldHoldGpusWhileItWaited() throws Exception {
        var job = twoNodesAndJobA();
        var verbs = verbs(Duration.ofMinutes(1), PolicySettings.DEFAULTS.withJobHeadroom(new JobHeadroom(4)));
        // 8 free, 4 needed: job a starts and leaves its 4.
        var seat = keptNode(verbs.service().filter(askAbout(job.a0())));
        assertThat(bind(verbs, job.a0(), seat)).isEmpty();
        assertThat(bind(verbs, job.a1(), keptNode(verbs.service().filter(askAbout(job.a1()))))).isEmpty();
        var other = alone("x", 2);
        await().atMost(Duration.ofSeconds(10)).until(() -> view.podByUid(other.getMetadata().getUid()) != null);
        assertThat(bind(verbs, other, verbs.service().filter(askAbout(other)).nodeNames().getFirst())).isEmpty();

        // a-1 is evicted and created again: 2 GPUs free, it needs 2; a-0 holds its GPUs meanwhile, so it is not held back.
        api.client().pods().inNamespace("ml").withName("a-1").delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> view.podByUid(job.a1().getMetadata().getUid()) == null);
        var again = member("a", "a-1b", 2, 2);
        await().atMost(Duration.ofSeconds(10)).until(() -> view.podByUid(again.getMetadata().getUid()) != null);
        assertThat(verbs.service().filter(askAbout(again)).nodeNames()).hasSize(1);
    }

    /** A pod of priority 0 bound to {@code node}, running since {@code minutesAgo}, of job {@code job} ("" for none). */
    private Pod running(String name, String node, int gpus, String job, int minutesAgo) {
        var labels = job.isEmpty() ? Map.<String, String>of() : Map.of(HetgpuKeys.POD_JOB, job);
        return api.client().pods().inNamespace("ml").resource(new PodBuilder()
                .withNewMetadata().withName(name).withNamespace("ml").withLabels(labels).endMetadata()
                .withNewSpec().withNodeName(node).withPriority(0).withSchedulerName("hetgpu-scheduler").addNewContainer().withName("main")
                .withImage("train").withNewResources().addToLimits(Map.of("nvidia.com/gpu", new Quantity(Integer.toString(gpus)))).endResources()
                .endContainer().endSpec()
                .withNewStatus().withPhase("Running").withStartTime(java.time.Instant.now().minusSeconds(60L * minutesAgo).toString()).endStatus()
                .build()).create();
    }

    private Pod urgent(String job, String name, int gpus, int size) {
        var pod = member(job, name, gpus, size);
        return api.client().pods().inNamespace("ml").withName(name).edit(p -> new PodBuilder(p).editSpec().withPriority(1000).endSpec().build());
    }

    private static io.hetgpu.extender.wire.ExtenderPreemptionArgs.MetaVictims victims(Pod... pods) {
        return new io.hetgpu.extender.wire.ExtenderPreemptionArgs.MetaVictims(
                java.util.Arrays.stream(pods).map(pod -> new io.hetgpu.extender.wire.ExtenderPreemptionArgs.MetaPod(pod.getMetadata().getUid())).toList(), 0);
    }

    private static Map<String, List<String>> victimNames(io.hetgpu.extender.wire.ExtenderPreemptionResult result, List<Pod> pods) {
        var names = new HashMap<String, String>();
        pods.forEach(pod -> names.put(pod.getMetadata().getUid(), pod.getMetadata().getName()));
        var byNode = new HashMap<String, List<String>>();
        result.nodeNameToMetaVictims().forEach((node, victims) ->
                byNode.put(node, victims.pods().stream().map(pod -> names.get(pod.uid())).sorted().toList()));
        return byNode;
    }

    @Test
    void anUrgentJobIsPlannedOnOneNodeOverTwoEvenIfThatEvictsMoreWorkVictimJobsCountingWhole() {
        node("n1");
        node("n2");
        // Job v (2 pods of 2 GPUs, one per node, 40 minutes of work each) against two lone pods (2 GPUs, 50 minutes each).
        var v0 = running("v-0", "n1", 2, "v", 40);
        var v1 = running("v-1", "n2", 2, "v", 40);
        var s1 = running("s1", "n1", 2, "", 50);
        var s2 = running("s2", "n2", 2, "", 50);
        var u0 = urgent("u", "u-0", 2, 2);
        urgent("u", "u-1", 2, 2);
        synced(6);
        var verbs = verbs(Duration.ofMinutes(1));
        assertThat(verbs.service().filter(askAbout(u0)).nodeNames()).as("the cluster is full").isEmpty();

        // kube-scheduler proposes, for u-0 alone, the oldest pod on each node (the fewest, lowest-priority victims).
        var result = verbs.preemption().answer(new io.hetgpu.extender.wire.ExtenderPreemptionArgs(u0, null,
                Map.of("n1", victims(s1), "n2", victims(s2))));

        // Job v alone (2 x 2 GPUs x 40 min = 9,600 GPU-seconds) would start u on two nodes, cheaper than s1 and s2 together
        // (12,000) which would too. Evicting s1 and v, whole (15,600), frees all of n1: u runs on one node, and that wins.
        // Only n1's victims are named: v-1 goes with its job, and n2 needs nothing for u.
        assertThat(victimNames(result, List.of(v0, v1, s1, s2))).isEqualTo(Map.of("n1", List.of("s1", "v-0")));
    }

    @Test
    void nothingIsEvictedForAJobThatWouldNotStartEvenSo() {
        node("n1");
        node("n2");
        var s1 = running("s1", "n1", 4, "", 50);
        running("s2", "n2", 4, "", 50);
        var u0 = urgent("u", "u-0", 4, 3);
        urgent("u", "u-1", 4, 3);
        urgent("u", "u-2", 4, 3);
        synced(5);
        var verbs = verbs(Duration.ofMinutes(1));

        var result = verbs.preemption().answer(new io.hetgpu.extender.wire.ExtenderPreemptionArgs(u0, null, Map.of("n1", victims(s1))));

        // 12 GPUs asked of a cluster of 8: evicting s1 would help u-0 alone, and start nothing.
        assertThat(result.nodeNameToMetaVictims()).isEmpty();
    }

    @Test
    void aPodOfAGangGroupWhoseCountCannotBeReadIsRefusedHoldingNothing() {
        node("n1");
        node("n2");
        var grouped = api.client().pods().inNamespace("ml").resource(new PodBuilder()
                .withNewMetadata().withName("g-0").withNamespace("ml").withAnnotations(Map.of("scheduling.k8s.io/group-name", "train"))
                .endMetadata()
                .withNewSpec().withSchedulerName("hetgpu-scheduler").addNewContainer().withName("main").withImage("train")
                .withNewResources().addToLimits(Map.of("nvidia.com/gpu", new Quantity("1"))).endResources()
                .endContainer().endSpec().build()).create();
        synced(1);
        var verbs = verbs(Duration.ofMinutes(1));

        var answer = verbs.service().filter(askAbout(grouped));

        assertThat(answer.nodeNames()).isEmpty();
        assertThat(answer.failedAndUnresolvableNodes().values()).singleElement().asString()
                .contains("job ml/train: its member count cannot be read (").contains("it is placed once it can, and holds no GPU until then");
        assertThat(verbs.service().jobs().holds().plans()).isEmpty();
    }

    @Test
    void burstsOfJobsNeverGetOneGpuTwice() throws Exception {
        node("n1");
        node("n2");
        var pods = new ArrayList<Pod>();
        for (var job : List.of("a", "b", "c", "d")) {
            for (int i = 0; i < 2; i++) {
                pods.add(member(job, job + "-" + i, 1 + job.charAt(0) % 3, 2));
            }
        }
        synced(pods.size());
        var verbs = verbs(Duration.ofMinutes(1));

        var placedJobs = new HashMap<String, Integer>();
        for (var pod : pods) {
            var answer = verbs.service().filter(askAbout(pod));
            if (!answer.nodeNames().isEmpty()) {
                assertThat(bind(verbs, pod, keptNode(answer))).isEmpty();
                placedJobs.merge(pod.getMetadata().getLabels().get(HetgpuKeys.POD_JOB), 1, Integer::sum);
            }
        }

        assertThat(placedJobs.values()).as("every job placed is placed whole").containsOnly(2);
        var devices = new HashSet<String>();
        for (var pod : pods) {
            var record = api.client().pods().inNamespace("ml").withName(pod.getMetadata().getName()).get().getMetadata().getAnnotations()
                    .get(HetgpuKeys.POD_GPU_DEVICES);
            if (record != null) {
                codec.decode(record).devices().forEach(device -> assertThat(devices.add(device)).as("GPU %s given twice", device).isTrue());
            }
        }
    }
}
