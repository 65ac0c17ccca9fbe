package io.hetgpu.testcluster.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The page as a browser lays it out: headless Chromium renders it at a laptop's and a wide screen's
 * width with a measuring script added (the page itself has none), and no two labels may overlap nor
 * any text spill out of its box. Also leaves a screenshot in {@code target/} to look at. Skipped,
 * saying why, where Chromium is not installed: CI does not depend on a browser; {@link ReportTest}
 * checks the page without one.
 */
class ClusterPictureInChromiumTest {

    /** Marks every pair of text boxes that overlap, and every box whose text is wider than it. */
    private static final String MEASURE = """
            <script>
            const labels = [...document.querySelectorAll('h1,h2,h3,.intro,.key,th,td,.node-name,.node-kind,.node-links,.free,.gpu,.data-volume,.pod-dot,.pending')];
            const problems = [];
            for (let i = 0; i < labels.length; i++) {
              const a = labels[i], ra = a.getBoundingClientRect();
              if (a.scrollWidth > a.clientWidth + 1 && getComputedStyle(a).display !== 'inline') problems.push('spills: ' + a.className + ' ' + a.textContent);
              for (let j = i + 1; j < labels.length; j++) {
                const b = labels[j];
                if (a.contains(b) || b.contains(a)) continue;
                const rb = b.getBoundingClientRect();
                const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
                const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
                if (w > 1 && h > 1) problems.push('overlap: ' + a.textContent + ' / ' + b.textContent);
              }
            }
            const out = document.createElement('pre');
            out.id = 'layout-check';
            out.textContent = 'LAYOUT[' + labels.length + ' labels]' + problems.join('\\n') + '[END]';
            document.body.appendChild(out);
            </script>
            """;

    private static Optional<Path> chromium;

    @BeforeAll
    static void findChromium() {
        chromium = Stream.of("chromium", "chromium-browser", "google-chrome")
                .flatMap(name -> Stream.of(System.getenv().getOrDefault("PATH", "").split(":")).map(dir -> Path.of(dir, name)))
                .filter(Files::isExecutable).findFirst();
    }

    @Test
    void noLabelOverlapsAnotherAtALaptopsOrAWideScreensWidth(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(chromium.isPresent(), "Chromium is not installed (apt-get install chromium): the rendered-page check is skipped");
        var page = dir.resolve("page.html");
        Files.writeString(page, demoSizedPage().replace("</body>", MEASURE + "</body>"));
        var plain = dir.resolve("plain.html");
        Files.writeString(plain, demoSizedPage());
        for (int width : new int[] {1280, 1920}) {
            var dom = run(dir, "--window-size=" + width + ",1200", "--dump-dom", page.toUri().toString());
            var check = Pattern.compile("LAYOUT\\[(\\d+) labels\\](.*?)\\[END\\]", Pattern.DOTALL).matcher(dom);
            assertThat(check.find()).as("the measuring script ran at width %d", width).isTrue();
            assertThat(Integer.parseInt(check.group(1))).as("labels measured").isGreaterThan(40);
            assertThat(check.group(2)).as("labels that overlap or spill at width %d", width).isEmpty();
        }
        var screenshot = Path.of("target", "hetgpu-picture-test.png").toAbsolutePath();
        Files.createDirectories(screenshot.getParent());
        run(dir, "--window-size=1600,1000", "--screenshot=" + screenshot, plain.toUri().toString());
        assertThat(screenshot).isNotEmptyFile();
    }

    /** The demo's shape: three racks, eleven nodes of five card kinds, two panels, every GPU of some nodes held. */
    private static String demoSizedPage() {
        var eight = List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7));
        var nodes = List.of(
                new NodeView("dgx-h100-1", "rack-a", "zone-1", "dgx-h100", "H100", 8, 80, eight, "NVSwitch, 18 NVLinks per GPU"),
                new NodeView("dgx-a100-1", "rack-a", "zone-1", "dgx-a100", "A100", 8, 80, eight, "NVSwitch, 12 NVLinks per GPU"),
                NodeView.cpu("cpu-a1", "rack-a", "zone-1"),
                new NodeView("dgx1-v100-1", "rack-b", "zone-1", "dgx1-v100", "V100", 8, 16, eight, "NVLink on 16 of 28 GPU pairs (1-2 links)"),
                new NodeView("dgx1-v100-2", "rack-b", "zone-1", "dgx1-v100", "V100", 8, 16, eight, "NVLink on 16 of 28 GPU pairs (1-2 links)"),
                new NodeView("t4-1", "rack-b", "zone-1", "t4-4x", "T4", 4, 15, List.of(), "PCIe only"),
                NodeView.cpu("cpu-b1", "rack-b", "zone-1"),
                new NodeView("k80-1", "rack-c", "zone-2", "k80-4x", "K80", 8, 11, List.of(), "PCIe only"),
                new NodeView("k80-2", "rack-c", "zone-2", "k80-4x", "K80", 8, 11, List.of(), "PCIe only"),
                new NodeView("t4-2", "rack-c", "zone-2", "t4-4x", "T4", 4, 15, List.of(), "PCIe only"),
                NodeView.cpu("cpu-c1", "rack-c", "zone-2"));
        var placements = new ArrayList<Placement>();
        placements.add(new Placement("bert-large-0", "bert-large", "worker", "high", "dgx-h100-1", "rack-a", "H100", eight.getFirst(), true,
                DataDistance.NO_DATA, "8 GPUs, NVLink, >= 40Gi per GPU, newest card first", "best: dgx-h100-1 scores 10/10"));
        for (int i = 0; i < 4; i++) {
            placements.add(new Placement("resnet-worker-" + i, "resnet", "worker", "high", "dgx-a100-1", "rack-a", "A100",
                    List.of(2 * i, 2 * i + 1), true, DataDistance.SAME_RACK, "2 GPUs, NVLink, newest card first", "best: dgx-a100-1 scores 8/10"));
        }
        for (int i = 0; i < 3; i++) {
            placements.add(new Placement("serving-" + i, "serving", "server", "normal", "cpu-b1", "rack-b", "cpu", List.of(), false,
                    DataDistance.NO_DATA, "no GPU (a CPU node first)", "best: cpu-a1 scores 10/10 (CPU node)"));
        }
        for (int i = 0; i < 10; i++) {
            placements.add(new Placement("sweep-" + i, "sweep", "trial", "low", i < 8 ? "k80-1" : "k80-2", "rack-c", "K80", List.of(i % 8), true,
                    DataDistance.NO_DATA, "1 GPU, oldest card that fits", "best: k80-1 scores 10/10 (1x K80, tier 10)"));
        }
        var panels = new LinkedHashMap<String, List<Placement>>();
        panels.put("hetgpu", placements);
        panels.put("kube-scheduler alone", placements.reversed());
        return ClusterPicture.render("hetgpu demo: the same jobs on the same cluster", nodes, panels,
                new DataVolume("imagenet", "rack-a", "ImageNet, 2 TiB over NFS"), ReportTest.SUMMARY);
    }

    private static String run(Path dir, String... arguments) throws IOException, InterruptedException {
        var command = new ArrayList<>(List.of(chromium.orElseThrow().toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--user-data-dir=" + Files.createTempDirectory(dir, "profile")));
        command.addAll(List.of(arguments));
        var output = dir.resolve("chromium-" + System.nanoTime() + ".out");
        var process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).redirectOutput(output.toFile()).start();
        if (!process.waitFor(90, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("Chromium did not finish in 90 s: " + command);
        }
        assertThat(process.exitValue()).as("Chromium's exit status for %s", command).isZero();
        return Files.readString(output);
    }
}
