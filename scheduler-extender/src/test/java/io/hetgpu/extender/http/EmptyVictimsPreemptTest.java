package io.hetgpu.extender.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.SnapshotClusterView;
import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.service.ExtenderVerbs;
import io.hetgpu.gpu.tier.CardCatalog;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.WebClient;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * kube-scheduler 1.38+ also proposes, to a preemption-capable extender, nodes where its own filters fit the pod with no
 * eviction (the extender's filter refused them): their victim list is empty, in either form. Such a node comes back with
 * the victims that make room for the pod where evictions would, with none where the pod fits it as it is, and is left
 * out where nothing would make room (how an extender refuses a candidate); none of it is an error. The training pod asks for 4 V100 or A100 with NVLink.
 */
class EmptyVictimsPreemptTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String POD = KubeJson.text("pod-pytorch-worker.json");

    private Vertx vertx;
    private ExtenderServer server;
    private WebClient client;

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        client = WebClient.create(vertx);
        var catalog = CardCatalog.defaults();
        var verbs = ExtenderVerbs.of(cluster(), new PodRequestParser("nvidia.com/gpu", catalog), new NodeStateFactory(catalog, "rack"),
                new PlacementPolicy(PolicySettings.DEFAULTS), (pod, table) -> { });
        server = ExtenderServerTest.join(ExtenderServer.start(vertx, new ServerOptions("127.0.0.1", 0, 1024 * 1024, null, null), verbs,
                new ExtenderMetrics()));
    }

    @AfterEach
    void stop() {
        server.close();
        ExtenderServerTest.join(vertx.close());
    }

    @Test
    void anEmptyVictimListOfFullPodsIsDroppedWhereNothingFitsAndTheRealCandidateKept() throws Exception {
        var answer = preempt("{\"Pod\":" + POD + ",\"NodeNameToMetaVictims\":null,\"NodeNameToVictims\":{"
                + "\"dgx-full\":{\"Pods\":[" + victim("w0") + "," + victim("w1") + "],\"NumPDBViolations\":0},"
                + "\"t4\":{\"Pods\":[],\"NumPDBViolations\":0}}}");

        assertThat(answer).isEqualTo(JSON.readTree(
                "{\"NodeNameToMetaVictims\":{\"dgx-full\":{\"Pods\":[{\"UID\":\"w0\"},{\"UID\":\"w1\"}],\"NumPDBViolations\":0}}}"));
    }

    @Test
    void anEmptyVictimListOfFullPodsIsKeptEmptyWhereThePodFitsAsItIs() throws Exception {
        var answer = preempt("{\"Pod\":" + POD + ",\"NodeNameToMetaVictims\":null,\"NodeNameToVictims\":{"
                + "\"dgx-free\":{\"Pods\":[],\"NumPDBViolations\":0},\"t4\":{\"Pods\":null,\"NumPDBViolations\":0}}}");

        assertThat(answer).isEqualTo(JSON.readTree("{\"NodeNameToMetaVictims\":{\"dgx-free\":{\"Pods\":[],\"NumPDBViolations\":0}}}"));
    }

    @Test
    void anEmptyMetaVictimListIsJudgedTheSameWay() throws Exception {
        var withVictims = preempt("{\"Pod\":" + POD + ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
                + "\"dgx-full\":{\"Pods\":[{\"UID\":\"w0\"},{\"UID\":\"w1\"}],\"NumPDBViolations\":0},"
                + "\"t4\":{\"Pods\":[],\"NumPDBViolations\":0}}}");
        assertThat(withVictims).isEqualTo(JSON.readTree(
                "{\"NodeNameToMetaVictims\":{\"dgx-full\":{\"Pods\":[{\"UID\":\"w0\"},{\"UID\":\"w1\"}],\"NumPDBViolations\":0}}}"));

        var fitting = preempt("{\"Pod\":" + POD + ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
                + "\"dgx-free\":{\"Pods\":[],\"NumPDBViolations\":0},\"t4\":{\"NumPDBViolations\":0}}}");
        assertThat(fitting).isEqualTo(JSON.readTree("{\"NodeNameToMetaVictims\":{\"dgx-free\":{\"Pods\":[],\"NumPDBViolations\":0}}}"));
    }

    /**
     * kube-scheduler counts 8 GPUs on dgx-full and the pod's 4 among them nowhere, so it proposes the node with no victims
     * (1.38+): hetgpu names the pods holding the NVLink quad the pod needs, the two bound last, and gives the others back.
     */
    @Test
    void anEmptyVictimListWhereEvictionsWouldMakeRoomComesBackWithTheVictimsThatDo() throws Exception {
        var answer = preempt("{\"Pod\":" + POD + ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
                + "\"dgx-full\":{\"Pods\":[],\"NumPDBViolations\":0},\"t4\":{\"Pods\":[],\"NumPDBViolations\":0}}}");

        assertThat(answer).isEqualTo(JSON.readTree(
                "{\"NodeNameToMetaVictims\":{\"dgx-full\":{\"Pods\":[{\"UID\":\"w2\"},{\"UID\":\"w3\"}],\"NumPDBViolations\":0}}}"));
    }

    @Test
    void aNodeThatFitsWithoutEvictionWinsOverOneWhereWorkWouldBeLost() throws Exception {
        // dgx-full's victims have run for an hour since their start: evicting them loses 4 GPU-hours.
        var hourAgo = java.time.Instant.now().minus(java.time.Duration.ofHours(1)).toString();
        var answer = preempt("{\"Pod\":" + POD + ",\"NodeNameToMetaVictims\":null,\"NodeNameToVictims\":{"
                + "\"dgx-full\":{\"Pods\":[" + victim("w0", hourAgo) + "," + victim("w1", hourAgo) + "],\"NumPDBViolations\":0},"
                + "\"dgx-free\":{\"Pods\":[],\"NumPDBViolations\":0}}}");

        assertThat(answer).isEqualTo(JSON.readTree("{\"NodeNameToMetaVictims\":{\"dgx-free\":{\"Pods\":[],\"NumPDBViolations\":0}}}"));
    }

    private JsonNode preempt(String body) throws Exception {
        var response = ExtenderServerTest.join(client.post(server.port(), "127.0.0.1", "/preempt")
                .putHeader("content-type", "application/json").sendBuffer(Buffer.buffer(body)));
        assertThat(response.statusCode()).isEqualTo(200);
        return JSON.readTree(response.bodyAsString());
    }

    private static String victim(String uid) {
        return "{\"metadata\":{\"name\":\"" + uid + "\",\"namespace\":\"ml\",\"uid\":\"" + uid + "\"}}";
    }

    private static String victim(String uid, String startTime) {
        return "{\"metadata\":{\"name\":\"" + uid + "\",\"namespace\":\"ml\",\"uid\":\"" + uid + "\"},\"status\":{\"startTime\":\""
                + startTime + "\"}}";
    }

    /** A DGX-1 whose GPUs four 2-GPU pods hold, one with all eight free, and a T4 server (the wrong cards) two pods hold. */
    private static SnapshotClusterView cluster() {
        var full = TestTopologies.dgx1V100("dgx-full");
        var free = TestTopologies.dgx1V100("dgx-free");
        var t4 = TestTopologies.t4x4("t4");
        var at = TestTopologies.READ_AT;
        var snapshot = NodeSnapshot.of(
                List.of(new NodeFacts("dgx-full", "1", Map.of(), TestTopologies.inventory(full), TestTopologies.free(full)),
                        new NodeFacts("dgx-free", "1", Map.of(), TestTopologies.inventory(free), TestTopologies.allFree(free)),
                        new NodeFacts("t4", "1", Map.of(), TestTopologies.inventory(t4), TestTopologies.free(t4))),
                Map.of("dgx-full", List.of(new BoundPod("w0", 2, true, at.minusSeconds(40)), new BoundPod("w1", 2, true, at.minusSeconds(30)),
                                new BoundPod("w2", 2, true, at.minusSeconds(20)), new BoundPod("w3", 2, true, at.minusSeconds(10))),
                        "t4", List.of(new BoundPod("t0", 2, false, at.minusSeconds(20)), new BoundPod("t1", 2, false, at.minusSeconds(10)))));
        return new SnapshotClusterView(() -> snapshot);
    }
}
