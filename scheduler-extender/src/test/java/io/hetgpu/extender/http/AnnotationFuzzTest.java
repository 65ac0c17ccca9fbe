package io.hetgpu.extender.http;

import io.hetgpu.extender.wire.ExtenderArgs;
import io.hetgpu.extender.wire.FilterResult;
import io.hetgpu.extender.wire.HostPriority;
import io.hetgpu.extender.wire.WireNode;
import io.hetgpu.extender.wire.AlikeRefusal;
import io.hetgpu.extender.service.ExtenderService;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.KubeJson;
import io.hetgpu.extender.TestTopologies;
import io.hetgpu.extender.cluster.ClusterView;
import io.hetgpu.extender.cluster.NodeSnapshot;
import io.hetgpu.extender.cluster.SnapshotClusterView;
import io.hetgpu.extender.http.WireCluster.Form;
import io.hetgpu.extender.model.NodeFacts;
import io.hetgpu.extender.model.NodeStateFactory;
import io.hetgpu.extender.model.PodRequestParser;
import io.hetgpu.extender.policy.PlacementPolicy;
import io.hetgpu.extender.policy.PolicySettings;
import io.hetgpu.extender.policy.PriorityThresholds;
import io.hetgpu.extender.policy.ScoreWeights;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.inventory.NvidiaKeys;
import io.hetgpu.gpu.tier.CardCatalog;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Random and adversarial node annotations and labels (sizes, depths, numbers, unicode, duplicate keys and
 * names) through the service in both node forms, and some through HTTP: every answer is well formed and
 * names every node asked about exactly once. Seeded: a failure names its seed and case, which replay it.
 */
class AnnotationFuzzTest {

    private static final int CASES_PER_SEED = 40;
    private static final int HTTP_EVERY = 20;
    private static final CardCatalog CATALOG = CardCatalog.defaults();
    private static final Pod GPU_POD = KubeJson.trainingPod();
    private static final Pod COUNT_POD = countOnlyPod();
    private static final Pod CPU_POD = WireCluster.read(WireCluster.CPU_POD, Pod.class);
    private static final List<NodeTopology> TOPOLOGIES = List.of(TestTopologies.dgx1V100("t"), TestTopologies.k80x4("t"),
            TestTopologies.t4x4("t"), TestTopologies.v100Pcie("t", 65));

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 5, 8, 13})
    void everyAnswerIsWellFormedAndNamesEveryNodeOnce(long seed) {
        var random = new Random(seed);
        for (int c = 0; c < CASES_PER_SEED; c++) {
            var label = "seed " + seed + ", case " + c;
            var nodes = new ArrayList<NodeFacts>();
            int count = 1 + random.nextInt(6);
            for (int i = 0; i < count; i++) {
                nodes.add(node(random, i));
            }
            var asked = askedNames(random, nodes);
            var pod = switch (random.nextInt(3)) {
                case 0 -> GPU_POD;
                case 1 -> COUNT_POD;
                default -> CPU_POD;
            };
            checkNodesForm(label, pod, nodes, asked);
            checkNodeNamesForm(label, pod, nodes, asked);
            if (c % HTTP_EVERY == 0) {
                checkOverHttp(label, nodes, asked);
            }
        }
    }

    private static void checkNodesForm(String label, Pod pod, List<NodeFacts> nodes, List<String> asked) {
        var service = service(ClusterView.REQUEST_ONLY);
        var byName = new HashMap<String, NodeFacts>();
        nodes.forEach(node -> byName.putIfAbsent(node.name(), node));
        var wire = asked.stream().map(name -> new WireNode(byName.get(name), new byte[] {'{', '}'}, 0, 2)).toList();
        var args = new ExtenderArgs(pod, wire, null);
        var filter = service.filter(args);
        var kept = filter.nodes().stream().map(node -> node.facts().name()).toList();
        assertNamesEachOnce(label + " (Nodes)", filter, kept, asked);
        assertScoresEachOnce(label + " (Nodes)", service.prioritize(args), asked);
    }

    private static void checkNodeNamesForm(String label, Pod pod, List<NodeFacts> nodes, List<String> asked) {
        var distinct = new HashMap<String, NodeFacts>();
        nodes.stream().filter(node -> !node.name().isEmpty()).forEach(node -> distinct.putIfAbsent(node.name(), node));
        var snapshot = NodeSnapshot.of(List.copyOf(distinct.values()), Map.of());
        var service = service(new SnapshotClusterView(() -> snapshot));
        // A name the cluster does not know, too.
        var names = new ArrayList<>(asked);
        names.add("gone-node");
        var args = new ExtenderArgs(pod, null, names);
        var filter = service.filter(args);
        assertNamesEachOnce(label + " (NodeNames)", filter, filter.nodeNames(), names);
        assertScoresEachOnce(label + " (NodeNames)", service.prioritize(args), names);
    }

    private static void checkOverHttp(String label, List<NodeFacts> nodes, List<String> asked) {
        var objects = new ArrayList<String>();
        for (var node : nodes) {
            var annotations = new HashMap<String, String>();
            annotations.put("hetgpu.io/gpu-inventory", node.inventory());
            annotations.put("hetgpu.io/gpu-free", node.free());
            // An API server holds only valid quantities.
            var allocatable = node.gpuAllocatable() != null && node.gpuAllocatable().matches("-?\\d+(\\.\\d+)?(e\\d+)?") ? node.gpuAllocatable() : null;
            objects.add(WireCluster.node(node.name().isEmpty() ? null : node.name(), node.labels(), annotations, allocatable));
        }
        for (var form : Form.values()) {
            // The NodeNames form's cluster holds the first node of each name, as an API server holds one.
            var held = form == Form.NODES ? objects : firstOfEachName(nodes, objects);
            try (var cluster = new WireCluster(form, held)) {
                for (var pod : List.of(WireCluster.GPU_POD, WireCluster.CPU_POD)) {
                    var filter = cluster.ask("filter", pod, asked);
                    assertThat(filter.status()).as(label + " " + form).isEqualTo(200);
                    assertThat(PoisonedNodeTest.fieldNames(filter.body()))
                            .containsExactly("Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error");
                    assertThat(filter.body().get("Error").asText()).as(label + " " + form).isEmpty();
                    var named = new ArrayList<>(PoisonedNodeTest.keptNames(filter, form));
                    named.addAll(PoisonedNodeTest.fieldNames(filter.body().get("FailedNodes")));
                    named.addAll(PoisonedNodeTest.fieldNames(filter.body().get("FailedAndUnresolvableNodes")));
                    assertThat(named).as(label + " " + form).containsExactlyInAnyOrderElementsOf(new LinkedHashSet<>(asked));
                    var scores = PoisonedNodeTest.scores(cluster.ask("prioritize", pod, asked));
                    assertThat(scores.keySet()).as(label + " " + form).containsExactlyInAnyOrderElementsOf(new LinkedHashSet<>(asked));
                    assertThat(scores.values()).allSatisfy(score -> assertThat(score).isBetween(0, 10));
                }
            }
        }
    }

    private static List<String> firstOfEachName(List<NodeFacts> nodes, List<String> objects) {
        var seen = new java.util.HashSet<String>();
        var held = new ArrayList<String>();
        for (int i = 0; i < nodes.size(); i++) {
            if (seen.add(nodes.get(i).name())) {
                held.add(objects.get(i));
            }
        }
        return held;
    }

    private static void assertNamesEachOnce(String label, FilterResult filter, List<String> kept, List<String> asked) {
        assertThat(filter.error()).as(label).isEmpty();
        var named = new ArrayList<>(kept);
        named.addAll(filter.failedNodes().keySet());
        named.addAll(filter.failedAndUnresolvableNodes().keySet());
        // Unresolvable refusals are named once per reason, which says how many nodes it stands for.
        int alike = filter.failedAndUnresolvableNodes().values().stream().mapToInt(reason -> AlikeRefusal.nodes(reason) - 1).sum();
        assertThat(named).as(label).doesNotHaveDuplicates().isSubsetOf(new LinkedHashSet<>(asked));
        assertThat(named.size() + alike).as(label + ": nodes named or stood for").isEqualTo(new LinkedHashSet<>(asked).size());
        filter.failedNodes().values().forEach(reason -> assertThat(reason).as(label).isNotBlank());
        filter.failedAndUnresolvableNodes().values().forEach(reason -> assertThat(reason).as(label).isNotBlank());
        // The answer is written as JSON kube-scheduler can read.
        var written = new WireWriter().filterResult(filter).toString();
        assertThat(WireCluster.read(written, com.fasterxml.jackson.databind.JsonNode.class).isObject()).as(label).isTrue();
    }

    private static void assertScoresEachOnce(String label, ExtenderService.Priorities priorities, List<String> asked) {
        assertThat(priorities.error()).as(label).isEmpty();
        var hosts = priorities.priorities().stream().map(HostPriority::host).toList();
        assertThat(hosts).as(label).containsExactlyInAnyOrderElementsOf(new LinkedHashSet<>(asked));
        priorities.priorities().forEach(entry -> assertThat(entry.score()).as(label).isBetween(0, 10));
    }

    private static ExtenderService service(ClusterView cluster) {
        return new ExtenderService(cluster, new PodRequestParser("nvidia.com/gpu", CATALOG), new NodeStateFactory(CATALOG, "topology.hetgpu.io/rack"),
                new PlacementPolicy(PolicySettings.DEFAULTS), (pod, table) -> { });
    }

    /** Which names a request asks about: every node's, some twice, sometimes an empty one. */
    private static List<String> askedNames(Random random, List<NodeFacts> nodes) {
        var names = new ArrayList<String>();
        for (var node : nodes) {
            names.add(node.name());
            if (random.nextInt(4) == 0) {
                names.add(node.name());
            }
        }
        java.util.Collections.shuffle(names, random);
        return names;
    }

    private static NodeFacts node(Random random, int i) {
        var name = switch (random.nextInt(10)) {
            case 0 -> "";
            case 1 -> "node-0";
            case 2 -> "nöde-" + i + "-\u7bc0\u70b9";
            default -> "node-" + i;
        };
        var labels = random.nextBoolean() ? featureDiscoveryLabels(random) : Map.<String, String>of();
        var allocatable = random.nextInt(3) == 0 ? null : pick(random, "8", "0", "4", "65", "-1", "99999999999", "1e3", " 8 ", "2.5", "", "\u0668");
        return new NodeFacts(name, random.nextBoolean() ? "" : Integer.toString(random.nextInt(3)), labels, inventory(random), free(random), allocatable);
    }

    private static String inventory(Random random) {
        var topology = TOPOLOGIES.get(random.nextInt(TOPOLOGIES.size()));
        var good = TestTopologies.inventory(topology);
        return switch (random.nextInt(12)) {
            case 0 -> null;
            case 1, 2 -> good;
            case 3 -> mutate(random, good);
            case 4 -> good.substring(0, random.nextInt(good.length()));
            case 5 -> nested(random, 1 + random.nextInt(3_000));
            case 6 -> good.replaceFirst("\"memoryMiB\":\\d+", "\"memoryMiB\":" + number(random));
            case 7 -> good.replaceFirst("\"index\":\\d+", "\"index\":" + number(random));
            case 8 -> good.replaceFirst("\"schema\":1,", "\"schema\":1,\"schema\":1,").replaceFirst("\"model\":\"(\\w+)\"", "\"model\":\"$1\",\"model\":\"A100\"");
            case 9 -> good.replaceFirst("\"model\":\"\\w+\"", "\"model\":" + jsonString(unicode(random)));
            case 10 -> unicode(random);
            default -> randomJson(random, 0);
        };
    }

    private static String free(Random random) {
        var topology = TOPOLOGIES.get(random.nextInt(TOPOLOGIES.size()));
        var good = TestTopologies.allFree(topology);
        return switch (random.nextInt(9)) {
            case 0, 1 -> null;
            case 2, 3 -> good;
            case 4 -> mutate(random, good);
            case 5 -> "{\"devices\":" + nested(random, 1 + random.nextInt(3_000)) + ",\"readAt\":\"2026-01-01T00:00:00Z\"}";
            case 6 -> "{\"devices\":[\"GPU-1\",\"GPU-1\"],\"devices\":[],\"readAt\":\"2026-01-01T00:00:00Z\"}";
            case 7 -> "{\"devices\":[" + jsonString(unicode(random)) + "],\"readAt\":" + jsonString(unicode(random)) + "}";
            default -> randomJson(random, 0);
        };
    }

    private static Map<String, String> featureDiscoveryLabels(Random random) {
        var labels = new HashMap<String, String>();
        var keys = List.of(NvidiaKeys.GFD_PRODUCT, NvidiaKeys.GFD_MEMORY, NvidiaKeys.GFD_COUNT, NvidiaKeys.GFD_COMPUTE_MAJOR,
                NvidiaKeys.GFD_COMPUTE_MINOR, NvidiaKeys.GFD_REPLICAS, NvidiaKeys.GFD_CLIQUE, NvidiaKeys.GFD_FAMILY);
        var good = TestNodes.gfd();
        for (var key : keys) {
            switch (random.nextInt(5)) {
                case 0 -> { }
                case 1 -> labels.put(key, number(random));
                case 2 -> labels.put(key, unicode(random));
                default -> labels.put(key, good.getOrDefault(key, "1"));
            }
        }
        return labels;
    }

    /** What GFD writes for a DGX-1. */
    private static final class TestNodes {
        static Map<String, String> gfd() {
            var labels = new HashMap<>(io.hetgpu.extender.TestNodes.gfdLabels("Tesla-V100-SXM2-16GB", 16384, 7, 0, 8));
            labels.put(NvidiaKeys.GFD_CLIQUE, "a1b2.0");
            return labels;
        }
    }

    private static String mutate(Random random, String text) {
        var chars = text.toCharArray();
        for (int n = 1 + random.nextInt(4); n > 0; n--) {
            var noise = "{}[]\":,0-9eX\\\u0000\u00e9";
            chars[random.nextInt(chars.length)] = noise.charAt(random.nextInt(noise.length()));
        }
        return new String(chars);
    }

    private static String nested(Random random, int depth) {
        return random.nextBoolean() ? "[".repeat(depth) + "]".repeat(depth) : "{\"a\":".repeat(depth) + "1" + "}".repeat(depth);
    }

    private static String number(Random random) {
        return switch (random.nextInt(7)) {
            case 0 -> "9".repeat(1 + random.nextInt(5_000));
            case 1 -> "-" + random.nextLong();
            case 2 -> "1e" + random.nextInt(400);
            case 3 -> Long.toString(Long.MAX_VALUE) + "0";
            case 4 -> "0.5";
            case 5 -> "-0";
            default -> Long.toString(random.nextLong());
        };
    }

    private static String unicode(Random random) {
        var text = new StringBuilder();
        for (int n = random.nextInt(40); n > 0; n--) {
            switch (random.nextInt(6)) {
                case 0 -> text.append('\ud800'); // a lone surrogate
                case 1 -> text.appendCodePoint(0x1F600 + random.nextInt(80));
                case 2 -> text.append('\u0000');
                case 3 -> text.append("\u202e\u200b");
                case 4 -> text.append('"');
                default -> text.appendCodePoint(0x20 + random.nextInt(0x3000));
            }
        }
        return text.toString();
    }

    private static String jsonString(String text) {
        return WireCluster.write(text);
    }

    private static String randomJson(Random random, int depth) {
        if (depth > 6) {
            return "null";
        }
        return switch (random.nextInt(7)) {
            case 0 -> number(random);
            case 1 -> jsonString(unicode(random));
            case 2 -> "true";
            case 3 -> {
                var items = new ArrayList<String>();
                for (int n = random.nextInt(5); n > 0; n--) {
                    items.add(randomJson(random, depth + 1));
                }
                yield "[" + String.join(",", items) + "]";
            }
            default -> {
                var fields = new ArrayList<String>();
                for (int n = random.nextInt(6); n > 0; n--) {
                    var key = pick(random, "schema", "devices", "links", "readAt", "index", "uuid", "x", "");
                    fields.add(jsonString(key) + ":" + randomJson(random, depth + 1));
                }
                yield "{" + String.join(",", fields) + "}";
            }
        };
    }

    @SafeVarargs
    private static <T> T pick(Random random, T... values) {
        return values[random.nextInt(values.length)];
    }

    private static Pod countOnlyPod() {
        var pod = KubeJson.trainingPod();
        pod.getMetadata().getAnnotations().keySet().removeIf(key -> key.startsWith("hetgpu.io/"));
        return pod;
    }
}
