package io.hetgpu.testcluster.demo;

import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.report.ClusterPicture;
import io.hetgpu.testcluster.report.DataVolume;
import io.hetgpu.testcluster.report.NodeView;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.testcluster.report.PlacementTable;
import io.hetgpu.testcluster.scheduler.Decision;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The demo: hetgpu and kube-scheduler alone place the same jobs on the same cluster; the differences are printed and drawn. */
public final class Demo {

    /** Pods whose extender explanation the demo prints: one of each kind of job. */
    private static final List<String> EXPLAINED = List.of("bert-large-0", "resnet-worker-0", "resnet-ps-0", "sweep-0", "serving-0");

    private final PrintWriter out;
    private final PrintWriter progress;
    private final long started = System.nanoTime();

    public Demo(PrintWriter out, PrintWriter progress) {
        this.out = out;
        this.progress = progress;
    }

    public int run(Path html, long seed) throws Exception {
        var configuration = DeployedConfiguration.load(ProjectFiles.manifests());
        var hetgpu = DemoRun.run(DemoRun.Scheduler.HETGPU, configuration, seed, this::progress);
        var baseline = DemoRun.run(DemoRun.Scheduler.BASELINE, configuration, seed, this::progress);

        out.println();
        out.println("Where hetgpu placed every pod:");
        out.print(PlacementTable.render(hetgpu.placements()));
        failures(hetgpu);
        out.println();
        out.println("Why (the extender's explanation, as the Event on each pod says it). n/10 is the extender's score, which");
        out.println("kube-scheduler multiplies by the extender's weight and 10 and adds to its own 0-200; a tier is the card's rank");
        out.println("in the tier table (" + tiers(configuration, hetgpu.nodes()) + "), the TIER `./hetgpu cluster inventory` prints:");
        for (var pod : EXPLAINED) {
            var text = hetgpu.explanations().get(pod);
            if (text != null) {
                out.println("  " + pod + ": " + text);
            }
            var choice = hetgpu.choices().get(pod);
            if (choice != null) {
                choice.detour().ifPresent(line -> out.println("    -> " + line));
            }
        }
        out.println();
        out.println("Where kube-scheduler alone placed them:");
        out.print(PlacementTable.render(baseline.placements()));
        failures(baseline);
        out.println();
        var summaries = new LinkedHashMap<String, DemoSummary>();
        summaries.put(hetgpu.scheduler().title, DemoSummary.of(hetgpu.placements()));
        summaries.put(baseline.scheduler().title, DemoSummary.of(baseline.placements()));
        out.print(DemoSummary.compare(summaries));

        var panels = new LinkedHashMap<String, List<io.hetgpu.testcluster.report.Placement>>();
        panels.put("hetgpu", hetgpu.placements());
        panels.put("kube-scheduler alone", baseline.placements());
        var page = html.toAbsolutePath();
        Files.createDirectories(page.getParent());
        Files.writeString(page, ClusterPicture.render("hetgpu demo: the same jobs on the same cluster", hetgpu.nodes(), panels,
                new DataVolume(DemoWorkload.DATA_CLAIM, DemoCluster.DATA_RACK, "ImageNet, 2 TiB over NFS"), DemoSummary.rows(summaries)));
        out.println();
        out.printf("Picture of racks, nodes and GPUs: %s%n", page);

        var scenes = List.of(PreemptionScene.run(DemoRun.Scheduler.HETGPU, configuration, seed, this::progress),
                PreemptionScene.run(DemoRun.Scheduler.BASELINE, configuration, seed, this::progress));
        out.println();
        out.println("An urgent job on a full cluster: " + PreemptionScene.A100 + " and " + PreemptionScene.V100 + " each run four 2-GPU trials");
        out.println("of a low-priority sweep (the A100 trials started first and checkpointed 5 minutes ago, the V100 trials 50");
        out.println("minutes ago) when " + PreemptionScene.URGENT + " arrives: 8 GPUs, one NVLink set, high priority. Both schedulers");
        out.println("preempt (kube-scheduler's DefaultPreemption); hetgpu's preempt verb chooses among its candidates.");
        for (var scene : scenes) {
            out.print(PreemptionScene.describe(scene));
        }
        var scenePage = page.resolveSibling(page.getFileName().toString().replaceFirst("\\.html$", "") + "-preemption.html");
        var scenePanels = new LinkedHashMap<String, List<io.hetgpu.testcluster.report.Placement>>();
        var sceneEvictions = new LinkedHashMap<String, List<io.hetgpu.testcluster.report.Eviction>>();
        scenes.forEach(scene -> {
            scenePanels.put(scene.scheduler().title, scene.placements());
            sceneEvictions.put(scene.scheduler().title, scene.evictions());
        });
        Files.writeString(scenePage, ClusterPicture.render("hetgpu demo: an urgent job on a full cluster", scenes.getFirst().nodes(), scenePanels,
                sceneEvictions, new DataVolume(DemoWorkload.DATA_CLAIM, "none", "no training data in this scene"), PreemptionScene.rows(scenes)));
        out.printf("Picture of the preemption scene, evicted pods marked: %s%n", scenePage);
        jobsScene(configuration, page, seed);
        draScene(configuration, seed);
        var learning = LearningScene.run(configuration, seed, this::progress);
        out.println();
        out.print(LearningScene.setting());
        out.print(LearningScene.describe(learning));
        progress(String.format("done in %.1f s", (System.nanoTime() - started) / 1e9));
        out.flush();
        return 0;
    }

    /** Two 8-GPU jobs arriving together on two 4-GPU servers: kube-scheduler alone stalls both, hetgpu runs one whole. */
    private void jobsScene(DeployedConfiguration configuration, Path page, long seed) throws Exception {
        var scenes = List.of(JobsScene.run(DemoRun.Scheduler.HETGPU, configuration, seed, this::progress),
                JobsScene.run(DemoRun.Scheduler.BASELINE, configuration, seed, this::progress));
        out.println();
        out.println("Two 8-GPU jobs arrive together: PyTorchJobs " + String.join(" and ", JobsScene.JOBS) + ", each a master and a worker of "
                + JobsScene.GPUS_PER_POD + " GPUs,");
        out.println("on " + JobsScene.NODE_1 + " and " + JobsScene.NODE_2 + " with " + JobsScene.GPUS_PER_POD
                + " GPUs free each. The training operator creates both jobs' pods at once, interleaved (a master of");
        out.println("each, then a worker of each). A job runs only once all its pods do; each pod is tried up to "
                + JobsScene.ATTEMPTS + " times.");
        for (var scene : scenes) {
            out.print(JobsScene.describe(scene));
        }
        var jobsPage = page.resolveSibling(page.getFileName().toString().replaceFirst("\\.html$", "") + "-jobs.html");
        var panels = new LinkedHashMap<String, List<io.hetgpu.testcluster.report.Placement>>();
        var halfPlaced = new LinkedHashMap<String, io.hetgpu.testcluster.report.HalfPlacedJobs>();
        scenes.forEach(scene -> {
            panels.put(scene.scheduler().title, scene.placements());
            halfPlaced.put(scene.scheduler().title, scene.halfPlaced());
        });
        Files.writeString(jobsPage, ClusterPicture.render("hetgpu demo: two 8-GPU jobs arrive together", scenes.getFirst().nodes(), panels,
                Map.of(), halfPlaced, new DataVolume(DemoWorkload.DATA_CLAIM, "none", "no training data in this scene"), JobsScene.rows(scenes)));
        out.printf("Picture of the jobs scene, stalled GPUs marked: %s%n", jobsPage);
    }

    /** hetgpu's DRA driver beside a plain claim: the same five pods claim GPUs, kube-scheduler alone places them. */
    private void draScene(DeployedConfiguration configuration, long seed) throws Exception {
        var scenes = List.of(DraScene.run(DraScene.Claims.PLAIN, configuration, seed, this::progress),
                DraScene.run(DraScene.Claims.HETGPU, configuration, seed, this::progress));
        out.println();
        out.println("DRA: " + DraScene.H100 + ", " + DraScene.V100 + " and " + DraScene.T4 + " publish their GPUs through hetgpu's DRA driver");
        out.println("(card model, tier, NVLink sets); five pods claim GPUs and kube-scheduler alone places them, its DynamicResources");
        out.println("plugin allocating first fit. Plain claims ask for any GPUs; hetgpu's claim templates list bands of card tiers");
        out.println("in the pod's order (newest first for high priority, oldest first for low), which 1.35's DRA score follows,");
        out.println("and prefer one NVLink set for several GPUs. No extender runs here.");
        for (var scene : scenes) {
            out.print(DraScene.describe(scene));
        }
    }

    /** The ranks of the demo's cards, oldest first, as the deployed extender's tier table gives them. */
    private static String tiers(DeployedConfiguration configuration, List<NodeView> nodes) {
        var catalog = CardCatalog.defaults().withOverrides(configuration.extender().tiers());
        return catalog.cards().stream().filter(card -> nodes.stream().anyMatch(node -> node.card().equals(card.model())))
                .map(card -> card.model() + " " + card.rank()).collect(java.util.stream.Collectors.joining(", "));
    }

    private void failures(DemoRun.Outcome outcome) {
        for (var decision : outcome.decisions()) {
            switch (decision) {
                case Decision.Unschedulable u -> out.println("  " + u.pod() + " pending: " + u.message());
                case Decision.Failed f -> out.println("  " + f.pod() + " not scheduled: " + f.error());
                case Decision.Nominated n -> out.println("  " + n.pod() + " nominated to " + n.node() + ", evicting " + n.victims());
                case Decision.Bound b -> { }
            }
        }
    }

    private void progress(String message) {
        // What a scene printed goes out first: with both streams in one log, a scene's text stays before the next one's progress.
        out.flush();
        progress.printf("[%5.1f s] %s%n", (System.nanoTime() - started) / 1e9, message);
        progress.flush();
    }
}
