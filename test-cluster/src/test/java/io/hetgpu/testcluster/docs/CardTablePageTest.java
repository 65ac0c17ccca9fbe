package io.hetgpu.testcluster.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.GpuArchitecture;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.tier.KnownCard;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import java.nio.file.Files;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The card table in docs/reference.md is the built-in tier table, row for row: a pod author choosing a
 * {@code gpu-min-model} reads ranks that the code really uses. On a mismatch the message holds the rows to paste.
 */
class CardTablePageTest {

    private static final String BEGIN = "<!-- card table: begin -->\n";
    private static final String END = "<!-- card table: end -->";
    private static final String HEADER = "| model | tier | memory | compute capability | architecture |\n| --- | ---: | ---: | --- | --- |\n";

    @Test
    void theReferencesCardTableIsTheBuiltInTierTable() throws Exception {
        var page = Files.readString(ProjectFiles.manifests().getParent().resolve("docs/reference.md"));
        int begin = page.indexOf(BEGIN);
        int end = page.indexOf(END);
        assertThat(begin).as("docs/reference.md has the card table's markers").isNotNegative();
        assertThat(end).isGreaterThan(begin);

        var expected = HEADER + CardCatalog.defaults().cards().stream().map(CardTablePageTest::row).collect(Collectors.joining());
        assertThat(page.substring(begin + BEGIN.length(), end)).as("the card table of docs/reference.md").isEqualTo(expected);
    }

    private static String row(KnownCard card) {
        return "| `" + card.model() + "` | " + card.rank() + " | " + card.maxMemoryMiB() / 1024 + " GiB | " + card.computeCapability()
                + " | " + GpuArchitecture.of(card.computeCapability()).label() + " |\n";
    }
}
