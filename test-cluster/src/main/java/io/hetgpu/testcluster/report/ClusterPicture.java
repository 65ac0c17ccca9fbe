package io.hetgpu.testcluster.report;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A self-contained HTML page (no scripts, no external files): one column per rack, one box per node,
 * one square per GPU coloured by the job holding it, one panel per scheduler so hetgpu and the
 * baseline can be compared side by side.
 */
public final class ClusterPicture {

    private static final String[] PALETTE = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"};

    private ClusterPicture() {
    }

    /** {@code panels}: title -> placements under that scheduler; the same nodes in every panel. */
    public static String render(String title, List<NodeView> nodes, Map<String, List<Placement>> panels) {
        var colours = new LinkedHashMap<String, String>();
        panels.values().forEach(placements -> placements.forEach(p -> colours.computeIfAbsent(p.job(),
                job -> PALETTE[colours.size() % PALETTE.length])));
        var html = new StringBuilder();
        html.append("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>").append(escape(title)).append("</title><style>")
                .append("body{font-family:system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px;margin-top:28px}")
                .append(".racks{display:flex;gap:16px;align-items:flex-start}.rack{border:2px solid #888;border-radius:6px;padding:8px;min-width:180px}")
                .append(".rack h3{margin:0 0 6px;font-size:13px}.node{border:1px solid #bbb;border-radius:4px;padding:6px;margin:6px 0;font-size:11px}")
                .append(".gpus{display:flex;flex-wrap:wrap;gap:3px;margin-top:4px}.gpu{width:18px;height:18px;border-radius:3px;background:#eee;")
                .append("border:1px solid #ccc;font-size:9px;text-align:center;line-height:18px;color:#fff}.legend span{display:inline-block;margin-right:14px}")
                .append(".swatch{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:4px;vertical-align:middle}</style></head><body>");
        html.append("<h1>").append(escape(title)).append("</h1><div class=\"legend\">");
        colours.forEach((job, colour) -> html.append("<span><i class=\"swatch\" style=\"background:").append(colour).append("\"></i>")
                .append(escape(job)).append("</span>"));
        html.append("</div>");
        panels.forEach((panel, placements) -> html.append(panel(panel, nodes, placements, colours)));
        return html.append("</body></html>").toString();
    }

    private static String panel(String name, List<NodeView> nodes, List<Placement> placements, Map<String, String> colours) {
        var holder = new HashMap<String, String>();
        var cpuPods = new HashMap<String, List<String>>();
        for (var p : placements) {
            if (!p.isPlaced()) {
                continue;
            }
            p.gpus().forEach(gpu -> holder.put(p.node() + "#" + gpu, p.job()));
            if (p.gpus().isEmpty()) {
                cpuPods.computeIfAbsent(p.node(), n -> new ArrayList<>()).add(p.job());
            }
        }
        var racks = new TreeMap<String, List<NodeView>>();
        nodes.forEach(node -> racks.computeIfAbsent(node.rack(), r -> new ArrayList<>()).add(node));
        var html = new StringBuilder("<h2>").append(escape(name)).append("</h2><div class=\"racks\">");
        racks.forEach((rack, members) -> {
            html.append("<div class=\"rack\"><h3>rack ").append(escape(rack)).append("</h3>");
            for (var node : members) {
                html.append("<div class=\"node\"><b>").append(escape(node.name())).append("</b> ").append(escape(node.machine()));
                html.append("<div class=\"gpus\">");
                for (int gpu = 0; gpu < node.gpus(); gpu++) {
                    var job = holder.get(node.name() + "#" + gpu);
                    html.append("<div class=\"gpu\" title=\"").append(escape(node.card() + " " + gpu + (job == null ? " free" : " " + job)))
                            .append("\"").append(job == null ? "" : " style=\"background:" + colours.get(job) + "\"").append(">")
                            .append(gpu).append("</div>");
                }
                for (var job : cpuPods.getOrDefault(node.name(), List.of())) {
                    html.append("<div class=\"gpu\" title=\"").append(escape(job)).append(" (no GPU)\" style=\"background:")
                            .append(colours.get(job)).append(";border-radius:9px\"></div>");
                }
                html.append("</div></div>");
            }
            html.append("</div>");
        });
        return html.append("</div>").toString();
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
