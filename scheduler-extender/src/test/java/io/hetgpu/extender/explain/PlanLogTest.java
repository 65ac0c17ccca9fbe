package io.hetgpu.extender.explain;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.extender.job.JobHolds;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The plan log names a pod author's job key and pods: what they hold must not forge a log line or reach a terminal raw. */
class PlanLogTest {

    private final ByteArrayOutputStream log = new ByteArrayOutputStream();
    private PrintStream stderr;

    @BeforeEach
    void capture() {
        // slf4j-simple writes to whatever System.err is when it logs.
        stderr = System.err;
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restore() {
        System.setErr(stderr);
    }

    @Test
    void jobKeysPodNamesAndReasonsAreQuotedWithTheirControlCharactersEscaped() {
        var heard = new ArrayList<String>();
        var listener = PlanLog.around(new JobHolds.Listener() {
            @Override
            public void held(JobHolds.HeldPlan plan) {
                heard.add("held " + plan.jobKey());
            }

            @Override
            public void ended(JobHolds.HeldPlan plan, JobHolds.Ending ending, String why) {
                heard.add(ending + " " + plan.jobKey());
            }
        });
        var key = "ml/llm\u001b[2J\nFORGED INFO line\u202e";
        var plan = new JobHolds.HeldPlan(key, List.of(new JobHolds.Hold("uid-0", "llm-0\r\u009b31m", "dgx-1", 0b1111,
                List.of("GPU-0", "GPU-1", "GPU-2", "GPU-3"))), Instant.parse("2026-11-28T00:00:00Z"), Instant.parse("2026-11-28T00:05:00Z"));

        listener.held(plan);
        listener.ended(plan, JobHolds.Ending.RELEASED, "pod llm-0\u0007 went away\n");
        listener.ended(plan, JobHolds.Ending.COMPLETE, "");

        var text = log.toString(StandardCharsets.UTF_8);
        assertThat(heard).containsExactly("held " + key, "RELEASED " + key, "COMPLETE " + key);
        assertThat(text).doesNotContainPattern("[\\x00-\\x09\\x0b-\\x1f\\x7f-\\x9f\\u202a-\\u202e]");
        assertThat(text.lines().toList()).hasSize(3).allSatisfy(line -> assertThat(line).contains("job \"ml/llm\\e[2J\\nFORGED INFO line\\u202e\""));
        assertThat(text).contains("planned whole, held until 2026-11-28T00:05:00Z: llm-0\\r\\x9b31m -> dgx-1 (4 GPUs)")
                .contains("plan released (pod llm-0\\x07 went away\\n)").contains("every planned pod bound");
    }
}
