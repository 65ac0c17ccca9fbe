package io.hetgpu.testcluster.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.deviceplugin.dra.slices.HetgpuSlice;
import io.hetgpu.gpu.allocation.NvlinkSets;
import io.hetgpu.gpu.inventory.HetgpuDra;
import io.hetgpu.gpu.profile.ProfileLoader;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The attributes table of docs/reference.md lists exactly what hetgpu's DRA driver publishes, and its taint. */
class DraAttributesPageTest {

    private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)`", Pattern.MULTILINE);

    @Test
    void theTableNamesEveryAttributeTheDriverPublishesAndNoOther() throws Exception {
        var page = Files.readString(ProjectFiles.manifests().getParent().resolve("docs/reference.md"));
        var table = page.substring(page.indexOf("<!-- dra attributes: begin -->"), page.indexOf("<!-- dra attributes: end -->"));
        var documented = new TreeSet<String>();
        ROW.matcher(table).results().forEach(row -> documented.add(row.group(1)));

        var published = new TreeSet<String>();
        // A device with every optional attribute: a PCIe root given, a NUMA node and the NVLink sets of a DGX-1.
        HetgpuDra.devices(ProfileLoader.load("dgx1-v100").topology("n"), CardCatalog.defaults(), Map.of(0, "pci0000:00")).get(0).attributes().keySet()
                .forEach(published::add);
        published.add(HetgpuDra.MEMORY);
        var sizes = new ArrayList<String>();
        NvlinkSets.SIZES.forEach(size -> sizes.add(HetgpuDra.nvlinkSet(size)));

        assertThat(published).containsAll(sizes);
        assertThat(documented).isEqualTo(published);
        assertThat(page).contains("`" + HetgpuSlice.UNHEALTHY_TAINT + "`", "`" + HetgpuSlice.NO_SCHEDULE + "`");
    }
}
