package io.hetgpu.testcluster.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathConstants;
import javax.xml.xpath.XPathFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

class ReportTest {

    static final String WORKER_REASON = "best: dgx-a100-1 scores 8/10 (2x A100, tier 70, 12 NVLinks per GPU pair)";

    static final List<Placement> PLACEMENTS = List.of(
            new Placement("ml/resnet-worker-0", "resnet", "worker", "high", "dgx-a100-1", "rack-a", "A100", List.of(0, 1), true,
                    DataDistance.SAME_RACK, "2 GPUs, NVLink, newest card first", WORKER_REASON),
            new Placement("ml/sweep-3", "sweep", "sweep", "low", "", "", "", List.of(), false, DataDistance.NO_DATA,
                    "1 GPU, oldest card that fits", ""),
            new Placement("ml/serve-0", "serving", "serving", "normal", "cpu-1", "rack-b", "cpu", List.of(), false, DataDistance.NO_DATA,
                    "no GPU (a CPU node first)", "best: cpu-1 scores 10/10 (CPU node)"),
            new Placement("ml/serve-1", "serving", "serving", "normal", "t4-1", "rack-b", "T4", List.of(), false, DataDistance.NO_DATA,
                    "no GPU (a CPU node first)", ""));

    static final List<NodeView> NODES = List.of(
            new NodeView("dgx-a100-1", "rack-a", "zone-1", "dgx-a100", "A100", 8, 80, List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7)),
                    "NVSwitch, 12 NVLinks per GPU"),
            NodeView.cpu("cpu-1", "rack-b", "zone-1"),
            new NodeView("t4-1", "rack-b", "zone-1", "t4-4x", "T4", 4, 16, List.of(), "PCIe only"));

    static final List<List<String>> SUMMARY = List.of(List.of("", "hetgpu", "kube-scheduler alone"),
            List.of("pods placed", "3 of 4", "4 of 4"));

    static String page() {
        var panels = new LinkedHashMap<String, List<Placement>>();
        panels.put("hetgpu <extender>", PLACEMENTS);
        return ClusterPicture.render("demo", NODES, panels, new DataVolume("imagenet", "rack-a", "ImageNet, 2 TiB over NFS"), SUMMARY);
    }

    @Test
    void tableAlignsColumnsMarksPendingPodsAndSaysNoGpu() {
        var lines = PlacementTable.render(PLACEMENTS).lines().toList();

        assertThat(lines).hasSize(5);
        assertThat(lines.get(0)).startsWith("POD").contains("NVLINK");
        assertThat(lines.get(1).indexOf("dgx-a100-1")).isEqualTo(lines.get(0).indexOf("NODE"));
        assertThat(lines.get(1)).contains("0,1").contains("yes").endsWith("same rack");
        assertThat(lines.get(2)).contains("(pending)");
        assertThat(lines.get(3)).contains(" no GPU ").doesNotContain("cpu  ");
        assertThat(lines.get(4)).contains("no GPU (T4 node)").doesNotContain("(none)");
    }

    @Test
    void pageIsSelfContainedAndEscapesNames() {
        var html = page();
        assertThat(html).startsWith("<!DOCTYPE html>").doesNotContain("<script").doesNotContain("http://").doesNotContain("https://")
                .contains("hetgpu &lt;extender&gt;");
    }

    @Test
    void legendNamesEveryShapeAndColourThePageUses() throws Exception {
        var page = parse(page());

        assertThat(texts(page, "//*[@id='legend']//*[@data-key]/@data-key")).contains("job", "gpu", "free", "no-gpu", "island", "data");
        // One swatch per job, in the colour its GPUs and circles carry.
        assertThat(texts(page, "//*[@id='legend']//*[@data-key='job']")).containsExactly("job resnet", "job sweep", "job serving");
        var resnetColour = attribute(page, "//*[@id='legend']//*[@data-key='job'][1]/i/@style");
        assertThat(attribute(page, "//div[@data-node='dgx-a100-1']//div[contains(@class,'gpu')][1]/@style")).isEqualTo(resnetColour);
    }

    @Test
    void everyPodShapeCarriesPodPriorityRequestAndReason() throws Exception {
        var page = parse(page());

        var worker = texts(page, "//div[@data-node='dgx-a100-1']//div[contains(@class,'gpu') and not(contains(@class,'idle'))]/@title");
        assertThat(worker).hasSize(2).allSatisfy(title -> assertThat(title.lines().toList()).containsExactly(
                "ml/resnet-worker-0 (job resnet, worker)", "priority: high", "asked for: 2 GPUs, NVLink, newest card first",
                "got: A100 GPUs 0,1 on dgx-a100-1, one NVLink set, data same rack", "why: extender: " + WORKER_REASON));
        // Pods without GPUs are circles, on the node they run on, whatever it is.
        assertThat(texts(page, "//div[@data-node='cpu-1']//span[@class='pod-dot']/@title")).singleElement()
                .satisfies(title -> assertThat(title).startsWith("ml/serve-0").contains("priority: normal", "asked for: no GPU"));
        assertThat(texts(page, "//div[@data-node='t4-1']//span[@class='pod-dot']/@title")).singleElement()
                .satisfies(title -> assertThat(title).contains("got: no GPU on t4-1", "why: no extender"));
    }

    @Test
    void nodesShowTheirCardsIslandsAndFreeGpus() throws Exception {
        var page = parse(page());

        assertThat(texts(page, "//div[@data-node='dgx-a100-1']/div[@class='node-kind']")).containsExactly("8× A100 80 GiB · dgx-a100 profile");
        assertThat(texts(page, "//div[@data-node='dgx-a100-1']//div[@class='island']/div")).containsExactly("0", "1", "2", "3", "4", "5", "6", "7");
        assertThat(texts(page, "//div[@data-node='dgx-a100-1']//div[@class='free']")).containsExactly("6 of 8 GPUs free");
        assertThat(texts(page, "//div[@data-node='dgx-a100-1']//div[@class='gpu idle']")).hasSize(6);
        // Without NVLink there is no island to draw.
        assertThat(texts(page, "//div[@data-node='t4-1']//div[@class='island']")).isEmpty();
        assertThat(texts(page, "//div[@data-node='t4-1']/div[@class='node-links']")).containsExactly("PCIe only");
        assertThat(texts(page, "//div[@data-node='cpu-1']/div[@class='node-kind']")).containsExactly("CPU only, no GPUs");
    }

    @Test
    void dataVolumeSitsInItsRackAndTheSummaryTableIsOnThePage() throws Exception {
        var page = parse(page());

        assertThat(texts(page, "//div[@class='rack'][h3[starts-with(.,'rack rack-a')]]/div[@class='data-volume']"))
                .containsExactly("data: imagenet (ImageNet, 2 TiB over NFS)");
        assertThat(texts(page, "//div[@class='data-volume']")).hasSize(1);
        assertThat(texts(page, "//table[@id='summary']//tr[1]/th")).containsExactly("", "hetgpu", "kube-scheduler alone");
        assertThat(texts(page, "//table[@id='summary']//tr[2]/td")).containsExactly("pods placed", "3 of 4", "4 of 4");
    }

    @Test
    void halfPlacedJobsHaveTheirGpusMarkedAndEachPendingPodSaysWhetherItsJobHoldsAny() throws Exception {
        var t4 = new NodeView("t4-1", "rack-a", "zone-1", "t4-4x", "T4", 4, 16, List.of(), "PCIe only");
        var placements = List.of(
                new Placement("ml/a-master-0", "a", "master", "normal", "t4-1", "rack-a", "T4", List.of(0, 1), false, DataDistance.NO_DATA,
                        "2 GPUs, any card", ""),
                new Placement("ml/a-worker-0", "a", "worker", "normal", "", "", "", List.of(), false, DataDistance.NO_DATA, "2 GPUs, any card", ""),
                new Placement("ml/b-master-0", "b", "master", "normal", "", "", "", List.of(), false, DataDistance.NO_DATA, "2 GPUs, any card", ""),
                new Placement("ml/b-worker-0", "b", "worker", "normal", "", "", "", List.of(), false, DataDistance.NO_DATA, "2 GPUs, any card", ""),
                new Placement("ml/alone", "-", "-", "normal", "t4-1", "rack-a", "T4", List.of(2), false, DataDistance.NO_DATA, "1 GPU, any card", ""));
        var halfPlaced = HalfPlacedJobs.of(placements);
        assertThat(halfPlaced.jobs()).containsExactly("a");
        assertThat(halfPlaced.gpus()).isEqualTo(2);
        assertThat(halfPlaced.line()).isEqualTo("half-placed jobs: 1, GPUs held by them: 2");

        var page = parse(ClusterPicture.render("jobs", List.of(t4), java.util.Map.of("kube-scheduler alone", placements), java.util.Map.of(),
                java.util.Map.of("kube-scheduler alone", halfPlaced), new DataVolume("imagenet", "none", "no data"), SUMMARY));

        assertThat(texts(page, "//div[@data-node='t4-1']//div[@class='gpu stalled']/@title")).hasSize(2)
                .allSatisfy(title -> assertThat(title).startsWith("ml/a-master-0").endsWith("stalled: job a is half-placed; this GPU waits for its other pods"));
        assertThat(texts(page, "//div[@data-node='t4-1']//div[@class='gpu']/@title")).singleElement().asString().startsWith("ml/alone");
        assertThat(texts(page, "//*[@id='legend']//*[@data-key]/@data-key")).contains("stalled");
        assertThat(texts(page, "//div[@class='pending']")).singleElement().asString()
                .contains("ml/a-worker-0 (job a, half-placed: its other pods hold GPUs that do nothing)")
                .contains("ml/b-master-0 (job b, waits whole, holding no GPU)");
        // A page that marks no half-placed jobs says nothing of them.
        assertThat(texts(parse(page()), "//*[@id='legend']//*[@data-key]/@data-key")).doesNotContain("stalled");
    }

    @Test
    void labelsCannotOverlap() {
        var html = page();
        // Nothing is taken out of the flow, so no label can be drawn over another...
        assertThat(html).doesNotContain("position:absolute").doesNotContain("position:fixed").doesNotContain("overflow:hidden");
        // ...the only fixed-size boxes, the GPU squares, hold their widest index (a digit is at most 0.6 em wide)...
        assertThat(ClusterPicture.TILE_DIGITS * 0.6 * ClusterPicture.TILE_FONT_PX).isLessThanOrEqualTo(ClusterPicture.TILE_PX - 2);
        // ...and rack columns share the width, wrapping their text instead of spilling into the next one.
        assertThat(html).contains(".rack{flex:1 1 0;min-width:0").contains("overflow-wrap:anywhere");
    }

    static Document parse(String html) throws Exception {
        var factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", false);
        return factory.newDocumentBuilder().parse(new ByteArrayInputStream(html.getBytes(StandardCharsets.UTF_8)));
    }

    private static List<String> texts(Document page, String xpath) throws Exception {
        var nodes = (NodeList) XPathFactory.newInstance().newXPath().evaluate(xpath, page, XPathConstants.NODESET);
        var texts = new ArrayList<String>();
        for (int i = 0; i < nodes.getLength(); i++) {
            texts.add(nodes.item(i) instanceof Element e ? e.getTextContent() : nodes.item(i).getNodeValue());
        }
        return texts;
    }

    private static String attribute(Document page, String xpath) throws Exception {
        return XPathFactory.newInstance().newXPath().evaluate(xpath, page);
    }
}
