package io.hetgpu.testcluster.throughputs;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.hetgpu.extender.cluster.ApiFaults;
import io.hetgpu.extender.throughput.LearnedState;
import io.hetgpu.extender.throughput.LearnedStateCodec;
import io.hetgpu.gpu.CardModel;
import io.hetgpu.gpu.Quote;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.NvidiaKeys;
import io.hetgpu.testcluster.explain.ExplainCommand;
import io.hetgpu.testcluster.explain.KubeconfigChoice;
import io.hetgpu.testcluster.explain.KubeconfigOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hetgpu throughputs}: what the extender has learned of each workload class's speed on each card model, read
 * from the ConfigMap it persists to ({@code hetgpu-throughputs}), computed by the extender's own learner. Get and list
 * only. Exit codes: 0 shown (nothing learned yet included), 1 the cluster cannot be read or the document is not one
 * the extender reads, 2 bad arguments.
 */
@Command(name = "throughputs", mixinStandardHelpOptions = true,
        description = {"What hetgpu has learned of each workload class's speed on each card model:",
                "per class, each card's throughput per GPU, the runs it rests on or that it is",
                "only a prior, and its share of the fastest card the class ran on. Read from",
                "the ConfigMap hetgpu-throughputs that the extender keeps (get only), with the",
                "extender's own code.",
                "",
                "Exit codes: 0 shown (also when nothing is learned yet), 1 the cluster cannot",
                "be read or the ConfigMap's document is not valid, 2 bad arguments."},
        footer = {"", "Examples:",
                "  hetgpu throughputs                              the cluster of your kubeconfig",
                "  kubectl hetgpu throughputs -o json              through kubectl (bin/ on PATH)"})
public final class ThroughputsCommand implements Callable<Integer> {

    /** The ConfigMap the extender persists what it learned to, in its own namespace. */
    public static final String CONFIG_MAP = "hetgpu-throughputs";
    /** Its data key: {@link LearnedStateCodec}'s JSON. */
    public static final String DATA_KEY = "throughputs.json";
    /** The extender's namespace as manifests/ deploys it. */
    public static final String DEFAULT_NAMESPACE = "hetgpu-system";
    /** The User-Agent of every request the command makes. */
    public static final String USER_AGENT = "hetgpu-throughputs";

    @Spec
    CommandSpec spec;

    @Mixin
    KubeconfigOptions kubeconfig;

    @Option(names = {"-n", "--namespace"}, paramLabel = "NS", defaultValue = DEFAULT_NAMESPACE,
            description = {"The extender's namespace, where its ConfigMap", "hetgpu-throughputs is. Default: " + DEFAULT_NAMESPACE + "."})
    String namespace;

    @Option(names = {"-o", "--output"}, paramLabel = "text|json", defaultValue = "text",
            description = {"text for people (default), or json for tools: one", "object, its fields in docs/reference.md."})
    String output;

    /** Said in one line with an exit code. */
    private static final class Failure extends Exception {
        final int code;

        Failure(String message, int code) {
            super(message);
            this.code = code;
        }
    }

    @Override
    public Integer call() {
        try {
            return show();
        } catch (Failure e) {
            return fail(e.getMessage(), e.code);
        } catch (RuntimeException e) {
            return fail(ExplainCommand.unexpected("showing the learned speeds", e), 1);
        }
    }

    private int show() throws Failure {
        if (!output.equals("text") && !output.equals("json")) {
            throw new Failure("--output: expected text or json, got " + Quote.of(output), 2);
        }
        var config = clientConfig();
        try (var client = new KubernetesClientBuilder().withConfig(config).build()) {
            var report = read(client, namespace);
            var out = spec.commandLine().getOut();
            out.print(output.equals("json") ? ThroughputsJson.render(report) : ThroughputsText.render(report));
            out.flush();
            return 0;
        }
    }

    /**
     * What {@code hetgpu throughputs} prints for the cluster {@code client} reaches, the extender's ConfigMap being in
     * {@code namespace}: the report's text, or the command's one-line failure. For the demo, which shows it in process.
     */
    public static String text(KubernetesClient client, String namespace) {
        try {
            return ThroughputsText.render(read(client, namespace));
        } catch (Failure e) {
            return "hetgpu throughputs: " + Quote.escaped(e.getMessage()) + "\n";
        }
    }

    /** The report of what the cluster holds: the ConfigMap's document, and the card models of its nodes where they can be listed. */
    static ThroughputReport read(KubernetesClient client, String namespace) throws Failure {
        var server = client.getMasterUrl() == null ? "(no server)" : client.getMasterUrl().toString().replaceAll("/$", "");
        var where = namespace + "/" + CONFIG_MAP;
        io.fabric8.kubernetes.api.model.ConfigMap configMap;
        try {
            configMap = client.configMaps().inNamespace(namespace).withName(CONFIG_MAP).get();
        } catch (KubernetesClientException e) {
            throw new Failure("reading ConfigMap " + where + " from " + server + " failed: "
                    + (e.getCode() <= 0 ? "no answer (" + KubeconfigChoice.unanswered(e) + ")"
                    : ApiFaults.describe(e) + " (hetgpu throughputs needs get on configmaps in " + namespace + ")"), 1);
        }
        var notes = new ArrayList<String>();
        if (configMap == null) {
            return ThroughputReport.nothing(where, server, notes);
        }
        var document = configMap.getData() == null ? null : configMap.getData().get(DATA_KEY);
        if (document == null) {
            throw new Failure("ConfigMap " + where + ": no data key " + DATA_KEY + " (the extender writes its learned state there)", 1);
        }
        LearnedState state;
        try {
            state = LearnedStateCodec.fromJson(document);
        } catch (IllegalArgumentException e) {
            throw new Failure("ConfigMap " + where + ", " + DATA_KEY + ": " + e.getMessage(), 1);
        }
        return ThroughputReport.of(where, server, state, clusterCards(client, notes), notes);
    }

    /** The card models of the cluster's GPU nodes, by hetgpu's label or GPU Feature Discovery's; null when nodes cannot be listed. */
    private static Set<String> clusterCards(KubernetesClient client, List<String> notes) {
        List<Node> nodes;
        try {
            nodes = client.nodes().list().getItems();
        } catch (KubernetesClientException e) {
            notes.add("listing nodes failed (" + (e.getCode() <= 0 ? KubeconfigChoice.unanswered(e) : ApiFaults.describe(e))
                    + "): priors are shown for every card model, not only the cluster's");
            return null;
        }
        var models = new TreeSet<String>();
        for (var node : nodes) {
            var labels = node.getMetadata() == null ? null : node.getMetadata().getLabels();
            if (labels == null) {
                continue;
            }
            var model = labels.getOrDefault(HetgpuKeys.LABEL_GPU_MODEL, labels.get(NvidiaKeys.GFD_PRODUCT));
            if (model != null && !model.isBlank()) {
                models.add(CardModel.fromProductName(model));
            }
        }
        return models;
    }

    private io.fabric8.kubernetes.client.Config clientConfig() throws Failure {
        try {
            return kubeconfig.clientConfig(USER_AGENT);
        } catch (KubeconfigChoice.Refused e) {
            throw new Failure(e.getMessage(), 2);
        }
    }

    /** The line names values read from the cluster: it is printed escaped, one line whatever they hold. */
    private int fail(String message, int code) {
        spec.commandLine().getErr().println("hetgpu throughputs: " + Quote.escaped(message));
        spec.commandLine().getErr().flush();
        return code;
    }
}
