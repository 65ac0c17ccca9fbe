package io.hetgpu.testcluster.explain;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code hetgpu explain}: where each pod of a workload would go and why, or why a pod waits, from one read of a cluster
 * (get and list only) or of the demo cluster, by the scheduler and the extender configured as {@code manifests/}
 * deploys them. Bad input is one line and exit code 2; a cluster that cannot be read, or a failure of explain's own, one
 * line and exit code 1.
 */
@Command(name = "explain", mixinStandardHelpOptions = true,
        description = {"Where each pod would go and why, ranked, with the scores and reasons hetgpu's",
                "extender gives (its own code, run in this process) beside kube-scheduler's",
                "filters and scores; for a pod no node takes, every node's reason grouped and",
                "what would have to change (GPUs of which class, what preemption would evict).",
                "Reads the cluster once, get and list only (nothing is written), or runs on the",
                "demo cluster with --demo. The scheduler and the extender are configured as",
                "manifests/ of this checkout deploys them.",
                "",
                "Exit codes: 0 explained, 1 the cluster cannot be read (or explain failed),",
                "2 bad arguments or files."},
        footer = {"", "Examples:",
                "  hetgpu explain --demo -f manifests/samples/training-data.yaml \\",
                "                        -f manifests/samples/pytorchjob.yaml",
                "  hetgpu explain -n ml resnet-worker-0        why does this pod wait?",
                "  kubectl hetgpu explain -f job.yaml -o json  through kubectl (bin/ on PATH)"})
public final class ExplainCommand implements Callable<Integer> {

    /** The User-Agent of every request explain makes. */
    public static final String USER_AGENT = "hetgpu-explain";

    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "POD", arity = "0..*",
            description = {"A pod of the cluster (NAME, NAMESPACE/NAME or", "pod/NAME): why it waits, or where it would go."})
    List<String> pods = new ArrayList<>();

    @Option(names = {"-f", "--filename"}, paramLabel = "FILE",
            description = {"A workload to place as if applied: Pod, Job,", "JobSet, TFJob, PyTorchJob (any Kubeflow training",
                    "job), StatefulSet, Deployment, with its claims,", "volumes and PriorityClasses; several documents",
                    "allowed, - for standard input. Repeatable."})
    List<String> files = new ArrayList<>();

    @Option(names = {"-n", "--namespace"}, paramLabel = "NS",
            description = {"Namespace of the objects and pods that name none.", "Default: the kubeconfig context's, else default."})
    String namespace;

    @Mixin
    KubeconfigOptions kubeconfig;

    @Option(names = "--demo", arity = "0..1", fallbackValue = "empty", paramLabel = "empty|loaded",
            description = {"Instead of a cluster, the demo's (3 racks: DGX", "H100, DGX A100, 2x DGX-1 V100, 2x T4, 2x K80,",
                    "3 CPU nodes) started here with the real device", "plugins: empty (--demo), or with the demo's mix",
                    "of 20 pods placed first by hetgpu (--demo=loaded).", "Takes a few seconds."})
    String demo;

    @Option(names = {"-o", "--output"}, paramLabel = "text|json", defaultValue = "text",
            description = {"text for people (default), or json for tools: one", "object, its fields in docs/reference.md."})
    String output;

    /** What explain is doing, for the line that says so should it fail in a way none of its own checks foresaw. */
    private String doing = "reading its arguments";

    /** Bad arguments or files: said in one line, exit code 2. */
    private static final class Usage extends Exception {
        Usage(String message) {
            super(message);
        }
    }

    @Override
    public Integer call() {
        try {
            return explain(System.in);
        } catch (Usage | WorkloadFiles.BadInput e) {
            return fail(e.getMessage(), 2);
        } catch (ClusterReading.Unreadable e) {
            return fail(e.getMessage(), 1);
        } catch (IOException | GpuDiscoveryException e) {
            return fail(e.getMessage(), 1);
        } catch (RuntimeException e) {
            return fail(unexpected(doing, e), 1);
        }
    }

    /**
     * The line for a fault of explain's own, not of the input: what it was doing says where, the exception's kind and
     * text what (Java's message alone, "long overflow", says neither to the person who ran it).
     */
    public static String unexpected(String doing, RuntimeException e) {
        var message = e.getMessage() == null || e.getMessage().isBlank() ? "" : ": " + Quote.cut(e.getMessage(), 200);
        return doing + " failed unexpectedly (" + e.getClass().getSimpleName() + message + ")";
    }

    private int explain(InputStream stdin) throws Usage, WorkloadFiles.BadInput, ClusterReading.Unreadable, IOException, GpuDiscoveryException {
        if (!output.equals("text") && !output.equals("json")) {
            throw new Usage("--output: expected text or json, got \"" + output + "\"");
        }
        if (demo != null && !demo.equals("empty") && !demo.equals("loaded")) {
            // --demo takes an optional value, so a pod named right after it is read as that value.
            throw new Usage("--demo: expected empty or loaded, got \"" + demo + "\" (for a pod of that name: --demo=empty " + demo
                    + ", or the pod before --demo)");
        }
        if (demo != null && kubeconfig.given()) {
            throw new Usage("--demo reads the demo cluster: leave out --kubeconfig and --context");
        }
        if (files.isEmpty() && pods.isEmpty()) {
            throw new Usage("nothing to explain: give a workload with -f FILE, or a pod's name (see --help)");
        }
        doing = "reading the configuration of manifests/";
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        doing = "reading the files";
        var given = WorkloadFiles.read(files.stream().map(file -> file.equals("-") ? file : callers(Path.of(file)).toString()).toList(), stdin);
        if (demo != null) {
            var inNamespace = namespace == null ? "default" : namespace;
            var workloads = Workloads.of(given.objects(), inNamespace);
            doing = "starting the demo cluster";
            spec.commandLine().getErr().println("hetgpu explain: starting the demo cluster" + (demo.equals("loaded") ? " and placing its mix" : "")
                    + " on this machine ...");
            spec.commandLine().getErr().flush();
            try (var cluster = ExplainDemo.start(configuration, demo.equals("loaded"), message -> { });
                 var client = cluster.newClient()) {
                return print(configuration, workloads, client, inNamespace,
                        "the demo cluster, " + (demo.equals("loaded") ? "with the demo's mix placed" : "empty"));
            }
        }
        doing = "reading the kubeconfig";
        var config = clientConfig();
        var inNamespace = namespace != null ? namespace : config.getNamespace() != null ? config.getNamespace() : "default";
        doing = "reading the files";
        var workloads = Workloads.of(given.objects(), inNamespace);
        doing = "connecting to the cluster";
        try (var client = new KubernetesClientBuilder().withConfig(config).build()) {
            return print(configuration, workloads, client, inNamespace, client.getMasterUrl().toString().replaceAll("/$", ""));
        }
    }

    private int print(DeployedConfiguration configuration, Workloads workloads, KubernetesClient client, String inNamespace, String clusterLabel)
            throws WorkloadFiles.BadInput, ClusterReading.Unreadable {
        doing = "reading the cluster";
        var reading = ClusterReading.of(client);
        var asked = pods.stream().map(pod -> podKey(pod, inNamespace)).toList();
        doing = "placing the pods";
        var report = new ExplainRun(configuration).explain(reading, workloads, asked, clusterLabel, "manifests/base of this checkout");
        doing = "printing the report";
        var out = spec.commandLine().getOut();
        out.print(output.equals("json") ? ExplainJson.render(report) : ExplainText.render(report));
        out.flush();
        return 0;
    }

    private static Path callers(Path path) {
        return KubeconfigChoice.callers(path);
    }

    /** NAME, NAMESPACE/NAME or pod/NAME (kubectl's form) as namespace/name. */
    private static String podKey(String pod, String inNamespace) {
        var name = pod.startsWith("pod/") ? pod.substring(4) : pod.startsWith("pods/") ? pod.substring(5) : pod;
        return name.contains("/") ? name : inNamespace + "/" + name;
    }

    /** The kubeconfig as kubectl finds it, with fabric8's retries on a refused connection cut to one: a person is waiting. */
    private Config clientConfig() throws Usage {
        try {
            return kubeconfig.clientConfig(USER_AGENT);
        } catch (KubeconfigChoice.Refused e) {
            // Without a cluster, the demo's is there to try.
            throw new Usage(e.getMessage().startsWith("no cluster to read") ? e.getMessage() + " (or try --demo)" : e.getMessage());
        }
    }

    /** The line names values read from files and the cluster: it is printed escaped, one line whatever they hold. */
    private int fail(String message, int code) {
        spec.commandLine().getErr().println("hetgpu explain: " + Quote.escaped(message));
        spec.commandLine().getErr().flush();
        return code;
    }
}
