package io.hetgpu.testcluster.explain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hetgpu.testcluster.api.ApiServer;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code hetgpu explain} as a pod author meets it: a pod that fits nowhere on the demo cluster is told what it lacks;
 * a pod that fits only once lower-priority pods go is told which preemption would evict; the JSON keeps one shape; and
 * bad input or a cluster that cannot be read is one line and an exit code, never a stack trace.
 */
class ExplainCommandTest {

    @TempDir
    Path dir;

    /** Every key of the report and of each pod, in order: the shape docs/reference.md documents for tools. */
    private static final List<String> REPORT_KEYS = List.of("kind", "version", "cluster", "configuration", "scheduler", "extenderWeight",
            "nodes", "notes", "pods");
    private static final List<String> POD_KEYS = List.of("namespace", "name", "workload", "job", "outcome", "node", "gpus", "cards",
            "tiedWith", "seated", "victims", "message", "ranking", "refusals", "changes");

    @Test
    void aPodThatFitsNowhereOnTheDemoClusterIsToldWhatItLacks() throws Exception {
        var pods = Files.writeString(dir.resolve("unfit.yaml"), pod("sixteen", "16", "") + "---\n" + pod("blackwell", "1", "B200"));

        var explained = Explaining.run("--demo", "-o", "json", "-f", pods.toString());

        assertThat(explained.code()).as(explained.err()).isZero();
        assertThat(fields(explained.json())).containsExactlyElementsOf(REPORT_KEYS);
        var page = Files.readString(ProjectFiles.manifests().resolveSibling("docs").resolve("reference.md"));
        assertThat(POD_KEYS).allSatisfy(key -> assertThat(page).as("docs/reference.md documents %s", key).contains("`" + key + "`"));
        assertThat(REPORT_KEYS).allSatisfy(key -> assertThat(page).as("docs/reference.md documents %s", key).contains("`" + key + "`"));
        assertThat(explained.json().path("cluster").asText()).isEqualTo("the demo cluster, empty");
        var sixteen = explained.pod("sixteen");
        assertThat(fields(sixteen)).containsExactlyElementsOf(POD_KEYS);
        assertThat(sixteen.path("outcome").asText()).isEqualTo("pending");
        assertThat(sixteen.path("message").asText()).startsWith("0/11 nodes are available");
        assertThat(sixteen.path("refusals").get(0).path("reason").asText()).isEqualTo("Insufficient nvidia.com/gpu");
        assertThat(sixteen.path("refusals").get(0).path("nodes")).hasSize(11);
        assertThat(texts(sixteen.path("changes"))).anySatisfy(change -> assertThat(change)
                .startsWith("no node has 16 GPUs at all: the most on one node is 8 (").contains("dgx-h100-1"));
        var blackwell = explained.pod("blackwell");
        assertThat(blackwell.path("outcome").asText()).isEqualTo("pending");
        var gpuNodes = new ArrayList<String>();
        blackwell.path("refusals").forEach(refusal -> {
            if (refusal.path("reason").asText().contains("pod needs B200 or newer (tier 100 and up)")) {
                assertThat(refusal.path("unresolvable").asBoolean()).isTrue();
                refusal.path("nodes").forEach(node -> gpuNodes.add(node.asText()));
            }
        });
        assertThat(gpuNodes).containsExactlyInAnyOrder("dgx-h100-1", "dgx-a100-1", "dgx1-v100-1", "dgx1-v100-2", "t4-1", "t4-2", "k80-1", "k80-2");
        assertThat(texts(blackwell.path("changes"))).anySatisfy(change -> assertThat(change)
                .startsWith("no node has 1 B200 or newer (tier 100 and up) GPU at all: no node has any such GPU"));
    }

    @Test
    void aPodThatFitsOnceLowerPriorityPodsGoIsToldWhichPreemptionWouldEvict() throws Exception {
        // The demo's mix runs its low-priority sweep on the K80 boxes; an urgent pod wants eight K80s.
        var pods = Files.writeString(dir.resolve("urgent.yaml"), """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: urgent
                  annotations:
                    hetgpu.io/gpu-models: K80
                spec:
                  schedulerName: hetgpu-scheduler
                  priorityClassName: training-high
                  containers:
                    - name: main
                      image: train
                      resources:
                        limits:
                          nvidia.com/gpu: 8
                """);

        var explained = Explaining.run("--demo=loaded", "-n", "ml", "-o", "json", "-f", pods.toString());

        assertThat(explained.code()).as(explained.err()).isZero();
        assertThat(explained.json().path("cluster").asText()).isEqualTo("the demo cluster, with the demo's mix placed");
        var urgent = explained.pod("urgent");
        assertThat(urgent.path("outcome").asText()).isEqualTo("nominated");
        assertThat(urgent.path("node").asText()).isIn("k80-1", "k80-2");
        assertThat(texts(urgent.path("victims"))).isNotEmpty().allSatisfy(victim -> assertThat(victim).startsWith("ml/sweep-"));
        assertThat(texts(urgent.path("changes"))).contains("preemption would evict " + String.join(", ", texts(urgent.path("victims")))
                + " on " + urgent.path("node").asText() + ", and the pod would then go there");
    }

    @Test
    void aFileThatIsNotYamlIsOneLineNamingItsLine() throws Exception {
        var file = Files.writeString(dir.resolve("broken.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: {name: [x\n");

        assertOneLine(Explaining.run("--demo", "-f", file.toString()), 2, file + ": not YAML: ", "line 3");
    }

    @Test
    void aKindExplainDoesNotKnowIsOneLineNamingIt() throws Exception {
        var file = Files.writeString(dir.resolve("ray.yaml"), "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\n"
                + "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: r}\n");

        assertOneLine(Explaining.run("--demo", "-f", file.toString()), 2, file + ", document 2: kind RayJob (apiVersion ray.io/v1) is not one hetgpu explain knows");
    }

    @Test
    void aWorkloadWithAFieldOfTheWrongShapeIsOneLineNamingTheField() throws Exception {
        var file = Files.writeString(dir.resolve("job.yaml"), """
                apiVersion: kubeflow.org/v1
                kind: PyTorchJob
                metadata: {name: p}
                spec:
                  pytorchReplicaSpecs:
                    Worker: {replicas: many, template: {spec: {containers: [{name: c, image: i}]}}}
                """);

        assertOneLine(Explaining.run("--demo", "-f", file.toString()), 2, "spec.pytorchReplicaSpecs.Worker.replicas: expected a whole number");
    }

    @Test
    void aGpuCountTheApiServerWouldRefuseIsOneLineNamingFieldAndValue() throws Exception {
        var file = Files.writeString(dir.resolve("pod.yaml"), """
                apiVersion: v1
                kind: Pod
                metadata: {name: p}
                spec:
                  schedulerName: hetgpu-scheduler
                  containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: two}}}]
                """);

        assertOneLine(Explaining.run("--demo", "-f", file.toString()), 2,
                file + ": Pod p: spec.containers[0].resources.limits[nvidia.com/gpu]: \"two\" is not a quantity");
    }

    @Test
    void aCountTooLargeToPlaceIsOneLineNamingItInsteadOfFillingTheHeap() throws Exception {
        var job = Files.writeString(dir.resolve("job.yaml"), """
                apiVersion: batch/v1
                kind: Job
                metadata: {name: sweep}
                spec:
                  parallelism: 100000000
                  template: {spec: {containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]}}
                """);
        var jobSet = Files.writeString(dir.resolve("jobset.yaml"), """
                apiVersion: jobset.x-k8s.io/v1alpha2
                kind: JobSet
                metadata: {name: llm}
                spec:
                  replicatedJobs:
                  - name: workers
                    replicas: 3000
                    template: {spec: {parallelism: 4, template: {spec: {containers: [{name: c, image: i}]}}}}
                """);

        assertOneLine(Explaining.run("--demo", "-f", job.toString()), 2,
                job + ": Job sweep: spec.parallelism: 100000000 pods at once, more than the 10000 of one workload this places");
        assertOneLine(Explaining.run("--demo", "-f", jobSet.toString()), 2,
                jobSet + ": JobSet llm: spec.replicatedJobs[workers]: 10004 pods at once, more than the 10000");
        var twoSweeps = Files.writeString(dir.resolve("sweeps.yaml"), Files.readString(job).replace("100000000", "6000") + "---\n"
                + Files.readString(job).replace("100000000", "6000").replace("name: sweep", "name: sweep-2"));
        assertOneLine(Explaining.run("--demo", "-f", twoSweeps.toString()), 2,
                twoSweeps + ", document 2: Job sweep-2 brings the pods to place to 12000, more than the 10000 this places at once");
    }

    @Test
    void aJobSetOfManyJobsOfNoPodsIsRefusedBeforeTheyAreBuilt() throws Exception {
        var jobSet = Files.writeString(dir.resolve("jobset.yaml"), """
                apiVersion: jobset.x-k8s.io/v1alpha2
                kind: JobSet
                metadata: {name: idle}
                spec:
                  replicatedJobs:
                  - name: workers
                    replicas: 2000000000
                    template: {spec: {parallelism: 0, template: {spec: {containers: [{name: c, image: i}]}}}}
                """);
        var two = Files.writeString(dir.resolve("two.yaml"), Files.readString(jobSet).replace("2000000000", "6000") + "---\n"
                + Files.readString(jobSet).replace("2000000000", "6000").replace("name: idle", "name: idle-2"));

        // The bound stops a run that would build two billion Jobs; the refusal itself takes well under a second.
        var refused = assertTimeoutPreemptively(Duration.ofMinutes(2), () -> Explaining.run("--demo", "-f", jobSet.toString()));
        assertOneLine(refused, 2, jobSet + ": JobSet idle: spec.replicatedJobs[workers].replicas: 2000000000 Jobs, more than the 10000 Jobs");
        assertOneLine(assertTimeoutPreemptively(Duration.ofMinutes(2), () -> Explaining.run("--demo", "-f", two.toString())), 2,
                two + ", document 2: JobSet idle-2 brings the Jobs to expand to 12000, more than the 10000 this expands at once");
        var past = Files.writeString(dir.resolve("past.yaml"), Files.readString(jobSet).replace("2000000000", "3000000000"));
        assertOneLine(Explaining.run("--demo", "-f", past.toString()), 2,
                past + ": JobSet idle: spec.replicatedJobs[workers].replicas: 3000000000 Jobs, more than the 10000 Jobs");
    }

    @Test
    void aPodOfAPodGroupTheClusterLacksWaitsForItWithoutAnOverflow() throws Exception {
        var pod = Files.writeString(dir.resolve("volcano.yaml"), """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: trainer-0
                  annotations: {scheduling.k8s.io/group-name: missing-group}
                spec:
                  schedulerName: hetgpu-scheduler
                  containers: [{name: main, image: train, resources: {limits: {nvidia.com/gpu: 1}}}]
                """);

        var explained = Explaining.run("--demo", "-o", "json", "-f", pod.toString());

        assertThat(explained.code()).as(explained.err()).isZero();
        var trainer = explained.pod("trainer-0");
        assertThat(trainer.path("job").path("key").asText()).isEqualTo("default/missing-group");
        // Waiting for its PodGroup is nothing an eviction changes: no nomination with nobody to evict.
        assertThat(trainer.path("outcome").asText()).isEqualTo("pending");
        assertThat(trainer.path("refusals").toString()).contains("its member count cannot be read");
        assertThat(texts(trainer.path("changes"))).noneSatisfy(change -> assertThat(change).contains("would evict"));
    }

    @Test
    void namesAndValuesFromAFileReachTheTerminalEscaped() throws Exception {
        // YAML's double quotes read \e as ESC: the name would clear the screen, the line break forge a line of its own,
        // and U+202E turn the text around it.
        var file = Files.writeString(dir.resolve("hostile.yaml"), """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: "evil\\e[2J\\nFORGED: line\\u202e"
                  namespace: "ml\\e]0;title\\a"
                  annotations:
                    scheduling.k8s.io/group-name: "group\\r\\x9b31m"
                    hetgpu.io/gpu-models: "K80\\e[5m"
                spec:
                  schedulerName: hetgpu-scheduler
                  containers: [{name: main, image: train, resources: {limits: {nvidia.com/gpu: 1}}}]
                ---
                apiVersion: v1
                kind: Pod
                metadata: {name: "plain\\t\\x7f"}
                spec:
                  schedulerName: hetgpu-scheduler
                  containers: [{name: main, image: train, resources: {limits: {nvidia.com/gpu: 1}}}]
                """);

        var explained = Explaining.run("--demo", "-f", file.toString());

        assertThat(explained.code()).as(explained.err()).isZero();
        assertThat(explained.out() + explained.err()).as(explained.out()).doesNotContainPattern("[\\x00-\\x09\\x0b-\\x1f\\x7f-\\x9f\\u202a-\\u202e]");
        assertThat(explained.out()).contains("ml\\e]0;title\\x07/evil\\e[2J\\nFORGED: line\\u202e (Pod evil\\e[2J\\nFORGED: line\\u202e; job ")
                .contains("group\\r\\x9b31m").contains("default/plain\\t\\x7f (Pod plain\\t\\x7f)");
        assertThat(explained.out().lines()).noneSatisfy(line -> assertThat(line).startsWith("FORGED"));
        // JSON escapes what it must, and here the rest too: printed safely, read back as the exact values.
        var json = Explaining.run("--demo", "-o", "json", "-f", file.toString());
        assertThat(json.out()).doesNotContainPattern("[\\x00-\\x09\\x0b-\\x1f\\x7f-\\x9f\\u202a-\\u202e]");
        assertThat(json.pod("evil\u001b[2J\nFORGED: line\u202e").path("namespace").asText()).isEqualTo("ml\u001b]0;title\u0007");
        assertThat(json.pod("plain\t\u007f").path("job").isNull()).isTrue();
    }

    @Test
    void aBadValueInAFileIsOneLineWithItsControlCharactersEscaped() throws Exception {
        var file = Files.writeString(dir.resolve("kind.yaml"), "apiVersion: ray.io/v1\nkind: \"Ray\\e[2J\\nJob\"\nmetadata: {name: r}\n");

        assertOneLine(Explaining.run("--demo", "-f", file.toString()), 2, file + ": kind Ray\\e[2J\\nJob (apiVersion ray.io/v1) is not one");
    }

    @Test
    void aFileWithoutEndOrNotTextIsOneLineNotAFullHeap() throws Exception {
        var huge = dir.resolve("huge.yaml");
        try (var file = new java.io.RandomAccessFile(huge.toFile(), "rw")) {
            // Sparse: as long as the limit and a byte, no disk taken; /dev/zero, which never ends, is refused the same way.
            file.setLength(WorkloadFiles.MAX_BYTES + 1L);
        }
        var binary = Files.write(dir.resolve("binary.yaml"), new byte[] {'k', 'i', 'n', 'd', ':', ' ', (byte) 0xc3, (byte) 0x28});

        assertOneLine(Explaining.run("--demo", "-f", huge.toString()), 2, huge + ": more than 16 MiB, more than the workload files explain reads");
        assertOneLine(Explaining.run("--demo", "-f", binary.toString()), 2, binary + ": not UTF-8 text");
    }

    @Test
    void anUnforeseenFailureSaysWhatExplainWasDoingNotJavasMessageAlone() {
        assertThat(ExplainCommand.unexpected("placing the pods", new ArithmeticException("long overflow")))
                .isEqualTo("placing the pods failed unexpectedly (ArithmeticException: long overflow)");
        assertThat(ExplainCommand.unexpected("reading the cluster", new NullPointerException()))
                .isEqualTo("reading the cluster failed unexpectedly (NullPointerException)");
        assertThat(ExplainCommand.unexpected("reading the files", new IllegalStateException("x".repeat(300) + "\n\tat Frame")))
                .startsWith("reading the files failed unexpectedly (IllegalStateException: xxx").endsWith("…(310 bytes))").doesNotContain("\n");
    }

    @Test
    void aKubeconfigThatCannotBeReadIsOneLine() {
        assertOneLine(Explaining.run("--kubeconfig", dir.resolve("missing").toString(), "some-pod"), 2, "--kubeconfig ", "cannot be read");
    }

    @Test
    void aContextTheKubeconfigDoesNotHoldIsOneLineNotAnotherCluster() throws Exception {
        var kubeconfig = kubeconfig("http://127.0.0.1:1");

        assertOneLine(Explaining.run("--kubeconfig", kubeconfig.toString(), "--context", "prod", "some-pod"), 2,
                "--kubeconfig " + kubeconfig + ": no context \"prod\"");
    }

    @Test
    void aClusterNobodyAnswersForIsOneLineAndExitCodeOne() throws Exception {
        int port;
        try (var socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        var kubeconfig = kubeconfig("http://127.0.0.1:" + port);

        assertOneLine(Explaining.run("--kubeconfig", kubeconfig.toString(), "some-pod"), 1,
                "listing nodes from http://127.0.0.1:" + port + " failed: no answer (connection refused");
    }

    @Test
    void aClusterThatRefusesIsOneLineSayingWhatExplainNeeds() throws Exception {
        try (var api = ApiServer.start()) {
            api.interfere(request -> new ApiServer.Interference.Refused(403));

            assertOneLine(Explaining.run("--kubeconfig", api.writeKubeconfig(dir.resolve("kubeconfig")).toString(), "some-pod"), 1,
                    "listing nodes from " + api.url() + " failed: HTTP 403", "needs get and list on nodes, pods");
        }
    }

    @Test
    void aPodNamedRightAfterDemoIsToldHowToNameIt() {
        assertOneLine(Explaining.run("--demo", "trainer-0"), 2,
                "--demo: expected empty or loaded, got \"trainer-0\" (for a pod of that name: --demo=empty trainer-0, or the pod before --demo)");
    }

    @Test
    void nothingToExplainIsOneLine() {
        assertOneLine(Explaining.run("--demo"), 2, "nothing to explain");
    }

    private static void assertOneLine(Explaining explained, int code, String... parts) {
        assertThat(explained.code()).as(explained.err()).isEqualTo(code);
        assertThat(explained.out()).isEmpty();
        assertThat(explained.err().lines().toList()).as(explained.err()).singleElement().satisfies(line -> {
            assertThat(line).startsWith("hetgpu explain: ").doesNotContain("Exception");
            for (var part : parts) {
                assertThat(line).contains(part);
            }
        });
    }

    private Path kubeconfig(String server) throws Exception {
        return Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: %s}}]
                contexts: [{name: c, context: {cluster: c, user: u}}]
                current-context: c
                users: [{name: u, user: {}}]
                """.formatted(server));
    }

    private static String pod(String name, String gpus, String minModel) {
        return """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: %s
                  annotations: {%s}
                spec:
                  schedulerName: hetgpu-scheduler
                  containers:
                    - name: main
                      image: train
                      resources:
                        limits:
                          nvidia.com/gpu: %s
                """.formatted(name, minModel.isEmpty() ? "" : "hetgpu.io/gpu-min-model: " + minModel, gpus);
    }

    private static List<String> fields(com.fasterxml.jackson.databind.JsonNode node) {
        var names = new ArrayList<String>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static List<String> texts(com.fasterxml.jackson.databind.JsonNode array) {
        var texts = new ArrayList<String>();
        array.forEach(item -> texts.add(item.asText()));
        return texts;
    }
}
