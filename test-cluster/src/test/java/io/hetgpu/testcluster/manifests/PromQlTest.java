package io.hetgpu.testcluster.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** What the metrics test reads out of an expression decides what it checks: the names and labels must be the real ones. */
class PromQlTest {

    @Test
    void findsTheMetricsAndLabelsOfAnAggregatedHistogramQuantile() {
        var reads = PromQl.reads("histogram_quantile(0.99, sum by (verb, le) (rate(hetgpu_extender_requests_seconds_bucket{status!=\"200\"}[$__rate_interval])))");

        assertThat(reads.selectors()).containsExactly(new PromQl.Selector("hetgpu_extender_requests_seconds_bucket", Set.of("status")));
        assertThat(reads.groupingLabels()).containsExactlyInAnyOrder("verb", "le");
    }

    @Test
    void skipsStringsKeywordsAndNumbersAndKeepsEverySelector() {
        var reads = PromQl.reads("absent(up{job=\"a,b{c}\"} == 1) or sum(rate(x_total[5m])) without (pod) > 0.05 and on (ns) y");

        assertThat(reads.selectors()).extracting(PromQl.Selector::metric).containsExactly("up", "x_total", "y");
        assertThat(reads.selectors().getFirst().labels()).containsExactly("job");
        assertThat(reads.groupingLabels()).containsExactlyInAnyOrder("pod", "ns");
    }
}
