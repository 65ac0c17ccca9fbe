package io.hetgpu.testcluster.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What docs/reference.md, docs/install.md and the chart's README say about the shipped scheduler configuration is
 * what {@code kubectl kustomize manifests/} and the chart's default render: the reference's table field by field, and
 * in all three the verbs called and whether the extender is ignorable.
 */
class ShippedConfigurationDocsTest {

    private static final Path REFERENCE = Path.of("..", "docs", "reference.md");
    private static final List<Path> DOCS = List.of(REFERENCE, Path.of("..", "docs", "install.md"), HelmChart.README);
    private static final Pattern ROW = Pattern.compile("(?m)^\\| `([A-Za-z]+)` \\| (`([^`]*)`|none) \\|");
    private static final List<String> VERB_FIELDS = List.of("filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb");

    @Test
    void theReferencesTableIsTheRenderedExtenderEntry() throws IOException {
        var table = new LinkedHashMap<String, String>();
        ROW.matcher(section(Files.readString(REFERENCE), "### The shipped scheduler configuration")).results()
                .forEach(row -> table.put(row.group(1), row.group(3)));
        assertThat(table).as("rows of the table").hasSizeGreaterThanOrEqualTo(10).containsKeys("bindVerb", "ignorable");

        for (var entry : List.of(extenderEntry(Kubectl.kustomize(ManifestTree.ROOT)), extenderEntry(HelmChart.render("1.37.1", "")))) {
            var rendered = new LinkedHashMap<String, String>();
            entry.properties().forEach(field -> rendered.put(field.getKey(), field.getValue().asText()));
            for (Map.Entry<String, String> row : table.entrySet()) {
                assertThat(rendered.get(row.getKey())).as("docs/reference.md says %s is %s", row.getKey(),
                        row.getValue() == null ? "not set" : row.getValue()).isEqualTo(row.getValue());
            }
            assertThat(table.keySet()).as("every field the entry sets is in the table").containsAll(rendered.keySet());
        }
    }

    @Test
    void everyDocSaysWhichVerbsAreCalledAndWhetherTheExtenderIsIgnorable() throws IOException {
        var entry = extenderEntry(Kubectl.kustomize(ManifestTree.ROOT));
        var verbs = new ArrayList<String>();
        VERB_FIELDS.stream().filter(entry::hasNonNull).forEach(field -> verbs.add("`" + entry.path(field).asText() + "`"));
        String verbList = String.join(", ", verbs.subList(0, verbs.size() - 1)) + " and " + verbs.getLast();
        String ignorable = entry.path("ignorable").asBoolean() ? "is `ignorable`" : "not `ignorable`";

        for (Path doc : DOCS) {
            var text = Files.readString(doc).replaceAll("\\s+", " ");
            assertThat(text).as(doc + " names the verbs called").contains(verbList);
            assertThat(text).as(doc + " says whether the extender is ignorable").contains(ignorable);
            assertThat(text).as(doc + " does not call the degraded mode the shipped one").doesNotContainPattern("without `bindVerb`\\*?\\*? \\(the shipped");
        }
    }

    private static JsonNode extenderEntry(Rendering rendering) {
        var config = rendering.one(ConfigMap.class, ExpectedDeployment.SCHEDULER_CONFIG_MAP).getData().get(ExpectedDeployment.SCHEDULER_CONFIG_KEY);
        var extenders = ManifestTree.yaml(config).path("extenders");
        assertThat(extenders.size()).as(rendering.folder() + ": extenders").isEqualTo(1);
        return extenders.get(0);
    }

    private static String section(String markdown, String heading) {
        int start = markdown.indexOf("\n" + heading + "\n");
        assertThat(start).as("heading " + heading).isNotNegative();
        int end = markdown.indexOf("\n### ", start + heading.length() + 1);
        return end < 0 ? markdown.substring(start) : markdown.substring(start, end);
    }
}
