package io.hetgpu.testcluster.throughputs;

import io.hetgpu.gpu.Quote;
import java.util.Locale;

/** A throughputs report for people: one table per workload class, fastest card first. */
final class ThroughputsText {

    private ThroughputsText() {
    }

    /** What a user reads when nothing has been learned: how the table fills, and where to read more. */
    static final String HOW_LEARNING_WORKS = """
            hetgpu learns how fast each workload class runs on each card model from pods that end: a pod that names its
            class (annotation hetgpu.io/workload) and says how much work it did, with the annotation hetgpu.io/work (its
            total, counted when it succeeds) or one line at exit in its termination message (hetgpu.io/work: <units>, to
            /dev/termination-log). Its run time, its node's cards and that figure give one sample; the extender keeps
            them in this ConfigMap. Until a class has run somewhere, pods of it are ranked by card tier.
            How a job is measured: docs/writing-pods.md#get-your-job-measured; how learning works:
            docs/concepts.md#learned-speeds.
            """;

    static String render(ThroughputReport report) {
        var out = new StringBuilder();
        if (!report.found() || report.classes().isEmpty()) {
            out.append("nothing learned yet: ").append(report.found() ? "ConfigMap " + report.configMap() + " holds no class"
                    : "no ConfigMap " + report.configMap()).append(" on ").append(Quote.escaped(report.cluster())).append("\n\n");
            out.append(HOW_LEARNING_WORKS);
            report.notes().forEach(note -> out.append("note: ").append(Quote.escaped(note)).append('\n'));
            return out.toString();
        }
        out.append("Learned workload speeds, ConfigMap ").append(report.configMap()).append(" on ").append(Quote.escaped(report.cluster()))
                .append(": ").append(report.classes().size()).append(report.classes().size() == 1 ? " class" : " classes").append('\n');
        out.append("per GPU: the class's own unit of work (steps, images, ...) per second on one GPU; runs: the samples the figure\n"
                + "rests on, or prior (never run there: its figures on other cards scaled by relative card speeds); pod GPUs: the\n"
                + "size of the pods it was measured on (1, 2-4 or 5+ GPUs, kept apart: speed per GPU drops as a job spreads; a\n"
                + "class's cards are compared at the size it ran at on the most cards); of best: the share of the fastest card\n"
                + "the class ran on, what policy.minimumSpeedShare compares (a prior is never judged by it). A class an admin\n"
                + "lists in policy.workloads keeps the admin's figures.\n");
        for (var workload : report.classes()) {
            var fastest = workload.cards().stream().filter(card -> card.card().equals(workload.fastest())).findFirst();
            out.append('\n').append(Quote.escaped(workload.workloadClass())).append(" (").append(workload.samples())
                    .append(workload.samples() == 1 ? " run" : " runs").append("; fastest: ").append(Quote.escaped(workload.fastest()))
                    .append(fastest.isPresent() && fastest.get().prior() ? ", a prior" : "").append(")\n");
            out.append(String.format(Locale.ROOT, "  %-8s %12s %7s %8s %8s%n", "card", "per GPU", "runs", "pod GPUs", "of best"));
            int hidden = 0;
            for (var card : workload.cards()) {
                // Priors for cards the cluster lacks are noise here (the fastest is measured, so it always stays).
                if (card.prior() && Boolean.FALSE.equals(card.onCluster()) && !card.card().equals(workload.fastest())) {
                    hidden++;
                    continue;
                }
                out.append(String.format(Locale.ROOT, "  %-8s %12s %7s %8s %8.2f%s%n", Quote.escaped(card.card()), figure(card.perGpu()),
                        card.prior() ? "prior" : Integer.toString(card.samples()), card.prior() ? "-" : card.podGpus(), card.ofBest(),
                        Boolean.FALSE.equals(card.onCluster()) ? "  (not on this cluster)" : ""));
            }
            if (hidden > 0) {
                out.append("  and priors for ").append(hidden).append(hidden == 1 ? " card model" : " card models")
                        .append(" this cluster does not have (-o json lists them)\n");
            }
        }
        if (!report.notes().isEmpty()) {
            out.append('\n');
            report.notes().forEach(note -> out.append("note: ").append(Quote.escaped(note)).append('\n'));
        }
        return out.toString();
    }

    /** A figure to three or four significant digits, thousands grouped: 1,250, 48.2, 0.125. */
    static String figure(double value) {
        if (value >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", value);
        }
        if (value >= 10) {
            return String.format(Locale.ROOT, "%.1f", value);
        }
        if (value >= 0.01) {
            return String.format(Locale.ROOT, "%.3f", value);
        }
        return String.format(Locale.ROOT, "%.2e", value);
    }
}
