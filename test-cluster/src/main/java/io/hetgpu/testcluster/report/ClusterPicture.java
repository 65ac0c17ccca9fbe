package io.hetgpu.testcluster.report;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * A self-contained HTML page (no scripts, no external files): a legend, the summary table, then one
 * panel per scheduler side by side where the page is wide enough, each with one column per rack, one
 * box per node (named by its cards and its profile), one square per GPU coloured by the job holding
 * it, NVLink islands outlined, one circle per pod without a GPU, and the data volume in its rack.
 * Every square and circle says in its tooltip which pod it is, its priority, what it asked for and
 * the extender's reason.
 *
 * <p>The page is well-formed XML as well as HTML, so that tests can read it with the JDK's parser.
 *
 * <p>Labels never overlap by construction: every text sits in normal flow (nothing is positioned
 * absolutely), boxes wrap rather than clip, and the only fixed-size boxes, the GPU squares, hold a
 * GPU index of at most {@link #TILE_DIGITS} digits, which {@link #TILE_PX} leaves room for.
 */
public final class ClusterPicture {

    private static final String[] PALETTE = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"};

    /** Side of a GPU square, CSS pixels. */
    static final int TILE_PX = 22;
    /** Font size of the index in a GPU square, CSS pixels. */
    static final int TILE_FONT_PX = 11;
    /** Digits a GPU index may have (a node holds at most 64 GPUs). */
    static final int TILE_DIGITS = 2;

    private ClusterPicture() {
    }

    /**
     * @param panels  title -> placements under that scheduler; the same nodes in every panel
     * @param data    where the training data lives
     * @param summary the comparison table, its first row the header
     */
    public static String render(String title, List<NodeView> nodes, Map<String, List<Placement>> panels, DataVolume data,
                                List<List<String>> summary) {
        return render(title, nodes, panels, Map.of(), data, summary);
    }

    /** The same, with the pods each panel's scheduler evicted marked on the nodes they ran on. */
    public static String render(String title, List<NodeView> nodes, Map<String, List<Placement>> panels, Map<String, List<Eviction>> evictions,
                                DataVolume data, List<List<String>> summary) {
        return render(title, nodes, panels, evictions, Map.of(), data, summary);
    }

    /**
     * The same, with each panel's half-placed jobs marked ({@code halfPlaced} by panel title): the GPUs their placed pods
     * hold, which do nothing while the job waits for its other pods, and for every pending pod whether its job is half
     * placed or waits whole.
     */
    public static String render(String title, List<NodeView> nodes, Map<String, List<Placement>> panels, Map<String, List<Eviction>> evictions,
                                Map<String, HalfPlacedJobs> halfPlaced, DataVolume data, List<List<String>> summary) {
        var colours = new LinkedHashMap<String, String>();
        panels.values().forEach(placements -> placements.forEach(p -> colours.computeIfAbsent(p.job(),
                job -> PALETTE[colours.size() % PALETTE.length])));
        var html = new StringBuilder();
        html.append("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"/>")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/><title>")
                .append(escape(title)).append("</title><style>").append(STYLE).append("</style></head><body>");
        html.append("<h1>").append(escape(title)).append("</h1>");
        html.append("<p class=\"intro\">Racks left to right, one box per node, one square per GPU. Hover a square or a circle for the pod, ")
                .append("its priority, what it asked for and why it went there.</p>");
        html.append("<div class=\"top\">").append(legend(colours, data, !halfPlaced.isEmpty())).append(summaryTable(summary)).append("</div>");
        html.append("<div class=\"panels\">");
        panels.forEach((panel, placements) -> html.append(panel(panel, nodes, placements, evictions.getOrDefault(panel, List.of()),
                halfPlaced.get(panel), colours, data)));
        html.append("</div>");
        return html.append("</body></html>").toString();
    }

    private static final String STYLE = String.join("",
            "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:20px 24px;color:#222;background:#fafafa}",
            "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:0 0 8px}.intro{margin:0 0 12px;color:#555;font-size:13px}",
            ".top{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start;margin-bottom:16px}",
            ".legend{flex:1 1 420px;background:#fff;border:1px solid #ddd;border-radius:6px;padding:10px 12px;font-size:13px}",
            ".legend h2,.summary caption{font-size:14px;font-weight:600;text-align:left;margin:0 0 6px}",
            ".legend .row{display:flex;flex-wrap:wrap;gap:6px 18px;margin:4px 0}.key{display:inline-flex;align-items:center;gap:6px}",
            ".summary{flex:1 1 520px;border-collapse:collapse;background:#fff;border:1px solid #ddd;font-size:13px}",
            ".summary th,.summary td{padding:4px 10px;border-bottom:1px solid #eee;text-align:left}.summary th{background:#f0f0f0}",
            ".panels{display:grid;grid-template-columns:repeat(auto-fit,minmax(720px,1fr));gap:20px}",
            ".panel{background:#fff;border:1px solid #ccc;border-radius:8px;padding:12px}",
            ".racks{display:flex;gap:10px;align-items:stretch}",
            ".rack{flex:1 1 0;min-width:0;border:2px solid #888;border-radius:6px;padding:6px 8px;background:#f6f6f6}",
            ".rack h3{margin:0 0 4px;font-size:14px}.rack .zone{font-weight:400;color:#666;font-size:12px}",
            ".data-volume{display:flex;align-items:center;gap:6px;font-size:12px;background:#fff7d6;border:1px solid #d9b84a;",
            "border-radius:4px;padding:3px 6px;margin:4px 0;overflow-wrap:anywhere}",
            ".node{border:1px solid #bbb;border-radius:4px;padding:5px 6px;margin:6px 0;font-size:12px;background:#fff;overflow-wrap:anywhere}",
            ".node-name{font-weight:600}.node-kind{color:#333}.node-links{color:#666;font-size:11px}.free{color:#333;font-size:11px;margin-top:2px}",
            ".gpus{display:flex;flex-wrap:wrap;gap:4px;margin-top:4px;align-items:center}",
            ".island{display:inline-flex;flex-wrap:wrap;gap:3px;padding:2px;border:2px dashed #2a7a2a;border-radius:5px}",
            ".gpu{box-sizing:border-box;width:" + TILE_PX + "px;height:" + TILE_PX + "px;border-radius:3px;font-size:" + TILE_FONT_PX + "px;",
            "line-height:" + (TILE_PX - 2) + "px;text-align:center;font-weight:600;color:#fff;border:1px solid rgba(0,0,0,.25);",
            "text-shadow:0 0 2px rgba(0,0,0,.6)}",
            ".gpu.idle{background:#fff;color:#444;border:1px solid #999;text-shadow:none}",
            ".pods{display:flex;flex-wrap:wrap;gap:4px;margin-top:4px}",
            ".pod-dot{display:inline-block;width:16px;height:16px;border-radius:50%;border:1px solid rgba(0,0,0,.3)}",
            ".swatch{display:inline-block;width:14px;height:14px;border-radius:3px;border:1px solid rgba(0,0,0,.25)}",
            ".disk{display:inline-block;width:14px;height:12px;border-radius:3px/5px;background:#e6c04a;border:1px solid #a0851f}",
            ".evicted{color:#a00;font-size:11px;text-decoration:line-through;text-decoration-color:rgba(170,0,0,.5);margin-top:3px}",
            ".key i{font-style:normal}.key .island{padding:1px}.pending{color:#a00;font-size:12px;margin-top:6px}",
            ".gpu.stalled{outline:3px solid #c00;outline-offset:-3px;",
            "background-image:repeating-linear-gradient(45deg,rgba(255,255,255,.55) 0 3px,transparent 3px 7px)}");

    private static String legend(Map<String, String> colours, DataVolume data, boolean stalled) {
        var html = new StringBuilder("<section class=\"legend\" id=\"legend\"><h2>Legend</h2><div class=\"row\">");
        colours.forEach((job, colour) -> html.append("<span class=\"key\" data-key=\"job\"><i class=\"swatch\" style=\"background:")
                .append(colour).append("\"></i>job ").append(escape(job)).append("</span>"));
        html.append("</div><div class=\"row\">")
                .append("<span class=\"key\" data-key=\"gpu\"><i class=\"gpu\" style=\"background:#777\">3</i>a GPU held by a pod, in its job's colour (the number: its index on the node)</span>")
                .append("<span class=\"key\" data-key=\"free\"><i class=\"gpu idle\">5</i>a free GPU</span>")
                .append("<span class=\"key\" data-key=\"no-gpu\"><i class=\"pod-dot\" style=\"background:#777\"></i>a pod without GPUs, in its job's colour</span>");
        if (stalled) {
            html.append("<span class=\"key\" data-key=\"stalled\"><i class=\"gpu stalled\" style=\"background:#777\">2</i>")
                    .append("a GPU held by a pod of a half-placed job: the job cannot run until its other pods do, so the GPU does nothing</span>");
        }
        html.append("</div><div class=\"row\">")
                .append("<span class=\"key\" data-key=\"island\"><i class=\"island\"><i class=\"gpu idle\">0</i><i class=\"gpu idle\">1</i></i>")
                .append("an NVLink island (GPUs reach each other over NVLink; others over PCIe only)</span>")
                .append("<span class=\"key\" data-key=\"data\"><i class=\"disk\"></i>where the training data (")
                .append(escape(data.claim())).append(") lives</span>")
                .append("<span class=\"key\" data-key=\"rack\">grey box: a rack; white box: a node (name, cards, profile)</span>")
                .append("</div></section>");
        return html.toString();
    }

    private static String summaryTable(List<List<String>> summary) {
        var html = new StringBuilder("<table class=\"summary\" id=\"summary\"><caption>What each scheduler achieved</caption>");
        for (int r = 0; r < summary.size(); r++) {
            var cell = r == 0 ? "th" : "td";
            html.append("<tr>");
            summary.get(r).forEach(text -> html.append('<').append(cell).append('>').append(escape(text)).append("</").append(cell).append('>'));
            html.append("</tr>");
        }
        return html.append("</table>").toString();
    }

    private static String panel(String name, List<NodeView> nodes, List<Placement> placements, List<Eviction> evicted,
                                HalfPlacedJobs halfPlaced, Map<String, String> colours, DataVolume data) {
        var stalled = halfPlaced == null ? java.util.Set.<String>of() : halfPlaced.jobs();
        var holder = new HashMap<String, Placement>();
        var cpuPods = new HashMap<String, List<Placement>>();
        for (var p : placements) {
            if (!p.isPlaced()) {
                continue;
            }
            p.gpus().forEach(gpu -> holder.put(p.node() + "#" + gpu, p));
            if (p.gpus().isEmpty()) {
                cpuPods.computeIfAbsent(p.node(), n -> new ArrayList<>()).add(p);
            }
        }
        var racks = new TreeMap<String, List<NodeView>>();
        nodes.forEach(node -> racks.computeIfAbsent(node.rack(), r -> new ArrayList<>()).add(node));
        var html = new StringBuilder("<section class=\"panel\"><h2>").append(escape(name)).append("</h2><div class=\"racks\">");
        racks.forEach((rack, members) -> {
            html.append("<div class=\"rack\"><h3>rack ").append(escape(rack)).append(" <span class=\"zone\">")
                    .append(escape(members.getFirst().zone())).append("</span></h3>");
            if (rack.equals(data.rack())) {
                html.append("<div class=\"data-volume\" title=\"").append(escape("volume claim " + data.claim() + ": " + data.description()
                        + ", on storage in " + rack)).append("\"><i class=\"disk\"></i>data: ").append(escape(data.claim()))
                        .append(" (").append(escape(data.description())).append(")</div>");
            }
            members.forEach(node -> html.append(node(node, holder, cpuPods.getOrDefault(node.name(), List.of()), colours,
                    evicted.stream().filter(e -> e.node().equals(node.name())).toList(), stalled)));
            html.append("</div>");
        });
        html.append("</div>");
        var pending = placements.stream().filter(p -> !p.isPlaced()).map(p -> halfPlaced == null ? p.pod() : p.pod() + " (job " + p.job()
                + (stalled.contains(p.job()) ? ", half-placed: its other pods hold GPUs that do nothing)" : ", waits whole, holding no GPU)")).toList();
        if (!pending.isEmpty()) {
            html.append("<div class=\"pending\">pending: ").append(escape(String.join(", ", pending))).append("</div>");
        }
        return html.append("</section>").toString();
    }

    private static String node(NodeView node, Map<String, Placement> holder, List<Placement> cpuPods, Map<String, String> colours,
                               List<Eviction> evicted, java.util.Set<String> stalled) {
        var html = new StringBuilder("<div class=\"node\" data-node=\"").append(escape(node.name())).append("\">");
        html.append("<div class=\"node-name\">").append(escape(node.name())).append("</div><div class=\"node-kind\">");
        if (node.gpus() == 0) {
            html.append("CPU only, no GPUs");
        } else {
            html.append(node.gpus()).append("× ").append(escape(node.card())).append(' ').append(node.memoryGiB())
                    .append(" GiB · ").append(escape(node.machine())).append(" profile");
        }
        html.append("</div>");
        if (node.gpus() > 0) {
            html.append("<div class=\"node-links\">").append(escape(node.interconnect())).append("</div><div class=\"gpus\">");
            int free = 0;
            int openIsland = -1;
            for (int gpu = 0; gpu < node.gpus(); gpu++) {
                int island = node.islandOf(gpu);
                if (island != openIsland) {
                    if (openIsland >= 0) {
                        html.append("</div>");
                    }
                    if (island >= 0) {
                        var members = node.islands().get(island);
                        html.append("<div class=\"island\" title=\"NVLink island: GPUs ").append(members.stream().map(String::valueOf)
                                .collect(Collectors.joining(","))).append(" of ").append(escape(node.name())).append("\">");
                    }
                    openIsland = island;
                }
                var pod = holder.get(node.name() + "#" + gpu);
                if (pod == null) {
                    free++;
                    html.append("<div class=\"gpu idle\" title=\"").append(escape(node.card() + " GPU " + gpu + " of " + node.name() + ": free"))
                            .append("\">").append(gpu).append("</div>");
                } else {
                    boolean half = stalled.contains(pod.job());
                    html.append("<div class=\"gpu").append(half ? " stalled" : "").append("\" style=\"background:").append(colours.get(pod.job()))
                            .append("\" title=\"").append(escape(tooltip(pod) + (half ? "\nstalled: job " + pod.job()
                                    + " is half-placed; this GPU waits for its other pods" : ""))).append("\">").append(gpu).append("</div>");
                }
            }
            if (openIsland >= 0) {
                html.append("</div>");
            }
            html.append("</div><div class=\"free\">").append(free).append(" of ").append(node.gpus()).append(" GPUs free</div>");
        }
        for (var eviction : evicted) {
            html.append("<div class=\"evicted\" title=\"").append(escape(eviction.pod() + " was evicted by preemption"))
                    .append("\">evicted: ").append(escape(eviction.pod())).append(" (GPU").append(eviction.gpus().size() == 1 ? " " : "s ")
                    .append(eviction.gpus().stream().map(String::valueOf).collect(Collectors.joining(","))).append(String.format(java.util.Locale.ROOT,
                            "; %.1f GPU-hours since its last checkpoint lost)", eviction.gpuHoursLost())).append("</div>");
        }
        if (!cpuPods.isEmpty()) {
            html.append("<div class=\"pods\">");
            cpuPods.forEach(pod -> html.append("<span class=\"pod-dot\" style=\"background:").append(colours.get(pod.job()))
                    .append("\" title=\"").append(escape(tooltip(pod))).append("\"></span>"));
            html.append("</div>");
        }
        return html.append("</div>").toString();
    }

    /** The pod, its priority, what it asked for, what it got and why: one line each. */
    static String tooltip(Placement pod) {
        var got = pod.gpus().isEmpty() ? "no GPU on " + pod.node()
                : pod.card() + " GPU" + (pod.gpus().size() > 1 ? "s " : " ") + pod.gpus().stream().map(String::valueOf)
                .collect(Collectors.joining(",")) + " on " + pod.node() + (pod.gpus().size() > 1 ? pod.nvlinkSet() ? ", one NVLink set" : ", NOT one NVLink set" : "");
        return pod.pod() + " (job " + pod.job() + ", " + pod.role() + ")\n"
                + "priority: " + pod.priority() + "\n"
                + "asked for: " + pod.request() + "\n"
                + "got: " + got + (pod.data() == DataDistance.NO_DATA ? "" : ", data " + pod.data().text()) + "\n"
                + "why: " + (pod.reason().isEmpty() ? "no extender: kube-scheduler's own scores (spreading over cpu and memory)" : "extender: " + pod.reason());
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;").replace("\n", "&#10;");
    }
}
