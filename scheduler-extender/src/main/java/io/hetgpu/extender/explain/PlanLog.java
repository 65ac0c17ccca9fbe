package io.hetgpu.extender.explain;

import io.hetgpu.extender.job.JobHolds;
import io.hetgpu.gpu.Quote;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One log line per job plan made and per plan ended, beside whoever else listens (the metrics): the seats of a job are
 * what an admin asks about when a job waits, and the log is the one place that names them all. A job's key is a pod
 * author's text (a label, an annotation), so it is quoted, and every name escaped: a line break in it must not forge a
 * line of the log, nor an escape sequence reach the terminal that shows it.
 */
public final class PlanLog {

    private static final Logger LOG = LoggerFactory.getLogger(PlanLog.class);

    private PlanLog() {
    }

    public static JobHolds.Listener around(JobHolds.Listener next) {
        return new JobHolds.Listener() {
            @Override
            public void held(JobHolds.HeldPlan plan) {
                LOG.info("job {} planned whole, held until {}: {}", Quote.of(plan.jobKey()), plan.deadline(), plan.holds().stream()
                        .map(hold -> Quote.escaped(hold.podName()) + " -> " + Quote.escaped(hold.node()) + " (" + hold.devices().size() + " GPUs)")
                        .collect(Collectors.joining(", ")));
                next.held(plan);
            }

            @Override
            public void ended(JobHolds.HeldPlan plan, JobHolds.Ending ending, String why) {
                if (ending == JobHolds.Ending.COMPLETE) {
                    LOG.info("job {}: every planned pod bound", Quote.of(plan.jobKey()));
                } else {
                    LOG.info("job {}: plan {} ({}); its {} held GPUs are free again", Quote.of(plan.jobKey()),
                            ending.name().toLowerCase(java.util.Locale.ROOT), Quote.escaped(why), plan.gpus());
                }
                next.ended(plan, ending, why);
            }
        };
    }
}
