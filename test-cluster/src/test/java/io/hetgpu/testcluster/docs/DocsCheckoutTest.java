package io.hetgpu.testcluster.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.testcluster.cluster.ProjectFiles;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The docs check over this checkout, as `./hetgpu docs check` runs it: every link, anchor and README command holds. */
class DocsCheckoutTest {

    @Test
    void theCheckoutsDocumentationPassesTheDocsCheck() throws Exception {
        var root = ProjectFiles.manifests().getParent();
        var report = new DocsCheck(root).run();
        assertThat(report.pages()).as("Markdown files found").isGreaterThan(5);
        assertThat(report.problems())
                .as("`./hetgpu docs check` finds:%n%s%n%s", report.problems().stream().map(Object::toString)
                        .collect(Collectors.joining(System.lineSeparator())), report.summary())
                .isEmpty();
    }
}
