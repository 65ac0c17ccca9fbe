package io.hetgpu.extender.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hetgpu.extender.model.BoundPod;
import io.hetgpu.extender.model.NodeFacts;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeSnapshotTest {

    private static final BoundPod POD = new BoundPod("uid-1", 2, false, Instant.parse("2026-01-01T00:00:00Z"));

    @Test
    void findsEveryNodeOfALargeClusterAtItsPosition() {
        var nodes = new ArrayList<NodeFacts>();
        for (int i = 0; i < 5_000; i++) {
            nodes.add(facts(String.format("node-%05d", i), "1"));
        }
        var snapshot = NodeSnapshot.of(nodes, Map.of("node-00042", List.of(POD)));

        assertThat(snapshot.size()).isEqualTo(5_000);
        for (int i = 0; i < 5_000; i++) {
            int position = snapshot.positionOf(nodes.get(i).name());
            assertThat(position).isEqualTo(i);
            assertThat(snapshot.facts(position)).isSameAs(nodes.get(i));
        }
        assertThat(snapshot.positionOf("node-05000")).isEqualTo(-1);
        assertThat(snapshot.facts("ghost")).isNull();
        assertThat(snapshot.boundPods("node-00042")).containsExactly(POD);
        assertThat(snapshot.boundPods("node-00043")).isEmpty();
        assertThat(snapshot.boundPods("ghost")).isEmpty();
    }

    @Test
    void findsANodeByItsNameAsBytesAsItDoesByString() {
        var nodes = new ArrayList<NodeFacts>();
        for (int i = 0; i < 1_000; i++) {
            nodes.add(facts(String.format("node-%05d", i), "1"));
        }
        nodes.add(facts("gpu-é", "1"));
        var snapshot = NodeSnapshot.of(nodes, Map.of());
        var body = "[\"xnode-00007\",\"node-00999\",\"node-01000\",\"node\"]".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

        assertThat(snapshot.positionOf(body, 3, 13)).as("node-00007 inside a longer name's bytes").isEqualTo(7);
        assertThat(snapshot.positionOf(body, 16, 26)).isEqualTo(999);
        assertThat(snapshot.positionOf(body, 29, 39)).as("a name the snapshot lacks").isEqualTo(-1);
        assertThat(snapshot.positionOf(body, 42, 46)).as("a prefix of known names").isEqualTo(-1);
        // A name beyond ASCII is found by String only (its bytes are not its characters); the byte path never claims it.
        assertThat(snapshot.positionOf("gpu-é")).isEqualTo(1_000);
    }

    @Test
    void checksAnExpectedPositionAgainstTheNameItsBytesGive() {
        var snapshot = NodeSnapshot.of(List.of(facts("node-1", "1"), facts("node-2", "1"), facts("gpu-é", "1")), Map.of());
        var body = "[\"node-2\",\"node-22\",\"gpu-\"]".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

        assertThat(snapshot.isNamed(1, body, 2, 8)).isTrue();
        assertThat(snapshot.isNamed(0, body, 2, 8)).as("another node's position").isFalse();
        assertThat(snapshot.isNamed(1, body, 11, 18)).as("a longer name that starts the same").isFalse();
        assertThat(snapshot.isNamed(2, body, 21, 25)).as("a name beyond ASCII is never claimed by bytes").isFalse();
        assertThat(snapshot.isNamed(-1, body, 2, 8)).as("no position expected").isFalse();
        assertThat(snapshot.isNamed(3, body, 2, 8)).as("a position past the snapshot's end").isFalse();
    }

    @Test
    void refusesANodeGivenTwice() {
        assertThatThrownBy(() -> NodeSnapshot.of(List.of(facts("a", "1"), facts("a", "2")), Map.of()))
                .hasMessage("node a given twice");
    }

    @Test
    void changingANodeKeepsEveryPositionAndLeavesTheOldSnapshotAsItWas() {
        var before = NodeSnapshot.of(List.of(facts("a", "1"), facts("b", "1")), Map.of());
        var updated = facts("b", "2");

        var after = before.withNode(updated).withBoundPods("a", List.of(POD));

        assertThat(after.samePositions(before)).isTrue();
        assertThat(after.facts("b")).isSameAs(updated);
        assertThat(after.boundPods("a")).containsExactly(POD);
        assertThat(before.facts("b").resourceVersion()).isEqualTo("1");
        assertThat(before.boundPods("a")).isEmpty();
        assertThat(before.withBoundPods("ghost", List.of(POD))).isSameAs(before);
    }

    @Test
    void addingANodeGivesNewPositions() {
        var before = NodeSnapshot.of(List.of(facts("a", "1")), Map.of());

        var after = before.withNode(facts("b", "1"));

        assertThat(after.samePositions(before)).isFalse();
        assertThat(after.positionOf("a")).isZero();
        assertThat(after.positionOf("b")).isEqualTo(1);
        assertThat(after.boundPods("b")).isEmpty();
        assertThat(before.positionOf("b")).isEqualTo(-1);
    }

    @Test
    void removingANodeMovesTheLastIntoItsPlaceAndForgetsIt() {
        var before = NodeSnapshot.of(List.of(facts("a", "1"), facts("b", "1"), facts("c", "1")), Map.of("c", List.of(POD)));

        var after = before.withoutNode("a");

        assertThat(after.samePositions(before)).isFalse();
        assertThat(after.size()).isEqualTo(2);
        assertThat(after.positionOf("a")).isEqualTo(-1);
        assertThat(after.positionOf("c")).isZero();
        assertThat(after.boundPods(0)).containsExactly(POD);
        assertThat(after.positionOf("b")).isEqualTo(1);
        assertThat(before.positionOf("a")).isZero();
        assertThat(after.withoutNode("a")).isSameAs(after);
        assertThat(after.withoutNode("b").withoutNode("c").size()).isZero();
    }

    private static NodeFacts facts(String name, String resourceVersion) {
        return new NodeFacts(name, resourceVersion, Map.of(), null, null);
    }
}
