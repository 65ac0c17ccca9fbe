package io.hetgpu.testcluster.explain;

import io.hetgpu.gpu.Quote;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * An explain report for people: per pod, where it would go, the nodes it could take ranked with kube-scheduler's total
 * and the extender's reasons, the refused nodes grouped by reason, and for a pod that would wait, what would have to
 * change. The JSON form ({@link ExplainJson}) carries every node; this one names the first few.
 *
 * <p>Every name, reason and message in it was read from a file or a cluster, so each is printed escaped ({@link Quote#escaped}):
 * an escape sequence or a line break in a pod's name must not reach the terminal as itself.
 */
final class ExplainText {

    /** Ranked nodes shown per pod; the rest are counted. */
    static final int RANKED = 5;
    /** Nodes named per reason; the rest are counted. */
    private static final int NAMED = 4;

    private ExplainText() {
    }

    static String render(ExplainReport report) {
        var text = new StringBuilder();
        text.append("hetgpu explain: ").append(report.pods().size()).append(report.pods().size() == 1 ? " pod" : " pods").append(" on ")
                .append(Quote.escaped(report.cluster())).append(" (").append(report.nodes()).append(" nodes), as ")
                .append(Quote.escaped(report.scheduler())).append(" with hetgpu's extender (weight ").append(report.weight())
                .append(") configured as ").append(Quote.escaped(report.configuration())).append('\n');
        report.notes().forEach(note -> text.append("note: ").append(Quote.escaped(note)).append('\n'));
        for (var pod : report.pods()) {
            text.append('\n');
            pod(text, pod, report.weight());
        }
        return text.toString();
    }

    private static void pod(StringBuilder text, PodExplanation pod, long weight) {
        text.append(Quote.escaped(pod.key())).append(" (").append(Quote.escaped(pod.workload()));
        var job = pod.job();
        if (job != null && job.whole()) {
            text.append("; job ").append(Quote.escaped(job.key()))
                    .append(job.members() > 0 ? " of " + job.members() + " pods" : ", size unknown: " + Quote.escaped(job.sizeUnknown()))
                    .append(", placed whole");
        } else if (job != null) {
            text.append("; job ").append(Quote.escaped(job.key())).append(", placed alone");
        }
        text.append(")\n");
        switch (pod.outcome()) {
            case PodExplanation.Placed placed -> placed(text, pod, placed, weight);
            case PodExplanation.Nominated nominated -> {
                text.append("  no node takes it now; preemption would evict ").append(joined(nominated.victims())).append(" on ")
                        .append(Quote.escaped(nominated.node())).append(" and nominate it there\n");
                waiting(text, pod);
            }
            case PodExplanation.Pending pending -> {
                text.append("  no node takes it now: it would stay Pending\n  kube-scheduler: ").append(Quote.escaped(pending.message())).append('\n');
                waiting(text, pod);
            }
            case PodExplanation.Failed failed -> text.append("  the attempt fails, and kube-scheduler retries it: ").append(Quote.escaped(failed.error())).append('\n');
            case PodExplanation.Refused refused -> text.append("  the API server would refuse it: ").append(Quote.escaped(refused.reason())).append('\n');
            case PodExplanation.NotForHetgpu other -> text.append("  not for hetgpu: spec.schedulerName is ").append(Quote.escaped(other.schedulerName()))
                    .append(", so hetgpu's scheduler never sees it\n");
            case PodExplanation.AlreadyBound bound -> text.append("  already bound to ").append(Quote.escaped(bound.node())).append('\n');
        }
    }

    private static void placed(StringBuilder text, PodExplanation pod, PodExplanation.Placed placed, long weight) {
        text.append("  -> ").append(Quote.escaped(placed.node()));
        if (!placed.cards().isEmpty()) {
            text.append(": ").append(Quote.escaped(placed.cards())).append(" (").append(joined(placed.devices())).append(')');
        }
        text.append(placed.seated() ? ", its seat in its job's plan\n" : "\n");
        if (!placed.tiedWith().isEmpty()) {
            text.append("  tied with ").append(joined(placed.tiedWith()))
                    .append(": kube-scheduler picks one of them at random; explain shows the first by name\n");
        }
        if (placed.seated()) {
            text.append("  the extender's scores when the job was planned (kube-scheduler then offers its pod that one node and scores nothing):\n");
            text.append(String.format(Locale.ROOT, "    %-3s %-20s %6s  %s%n", "#", "node", "hetgpu", "why"));
            for (int i = 0; i < Math.min(RANKED, pod.ranking().size()); i++) {
                var rank = pod.ranking().get(i);
                text.append(String.format(Locale.ROOT, "    %-3d %-20s %3d/10  %s%n", i + 1, Quote.escaped(rank.node()), rank.extender(), why(rank)));
            }
        } else if (pod.ranking().size() == 1) {
            text.append("  the only node left after the filters: kube-scheduler scores nothing then\n");
        } else {
            text.append("  ranked by kube-scheduler's total = hetgpu's score x ").append(weight)
                    .append(" x 10 + its own (least allocated + balanced cpu/memory, 0-200):\n");
            text.append(String.format(Locale.ROOT, "    %-3s %-20s %6s %7s %5s  %s%n", "#", "node", "total", "hetgpu", "own", "why"));
            for (int i = 0; i < Math.min(RANKED, pod.ranking().size()); i++) {
                var rank = pod.ranking().get(i);
                text.append(String.format(Locale.ROOT, "    %-3d %-20s %6d %4d/10 %5d  %s%n", i + 1, Quote.escaped(rank.node()), rank.total(), rank.extender(),
                        rank.kubeScheduler(), why(rank)));
            }
        }
        if (pod.ranking().size() > RANKED) {
            text.append("    … ").append(pod.ranking().size() - RANKED).append(" more (--output json lists every node)\n");
        }
        refusals(text, pod.refusals());
    }

    private static void waiting(StringBuilder text, PodExplanation pod) {
        refusals(text, pod.refusals());
        if (!pod.changes().isEmpty()) {
            text.append("  what would have to change:\n");
            pod.changes().forEach(line -> text.append("    - ").append(Quote.escaped(line)).append('\n'));
        }
    }

    private static void refusals(StringBuilder text, List<PodExplanation.Refusal> refusals) {
        if (refusals.isEmpty()) {
            return;
        }
        int nodes = refusals.stream().mapToInt(refusal -> refusal.nodes().size()).sum();
        text.append("  refused on ").append(nodes).append(nodes == 1 ? " node" : " nodes").append(", by reason:\n");
        for (var refusal : refusals) {
            var named = refusal.nodes().stream().limit(NAMED).toList();
            text.append("    ").append(refusal.nodes().size()).append(refusal.nodes().size() == 1 ? " node" : " nodes").append(" (")
                    .append(joined(named)).append(refusal.nodes().size() > NAMED ? ", …" : "").append("): ")
                    .append(Quote.escaped(refusal.reason())).append('\n');
        }
    }

    private static String why(PodExplanation.Rank rank) {
        return Quote.escaped(rank.behind().isEmpty() ? rank.offer() : rank.offer() + "; behind the best: " + rank.behind());
    }

    private static String joined(List<String> values) {
        return values.stream().map(Quote::escaped).collect(Collectors.joining(", "));
    }
}
