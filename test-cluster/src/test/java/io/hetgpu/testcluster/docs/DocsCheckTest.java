package io.hetgpu.testcluster.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.testcluster.cli.TestClusterMain;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import io.hetgpu.testcluster.docs.DocsCheck.Problem;
import io.hetgpu.testcluster.docs.DocsCheck.Rule;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The docs check on small checkouts made here (the real launcher and kubectl plugin, made-up pages): each kind of
 * problem is found, on its line, and only by its rule (the check without that rule finds nothing there); what is
 * right passes.
 */
class DocsCheckTest {

    @TempDir
    Path root;

    @Test
    void aLinkToAFileThatIsNotThereIsFound() throws Exception {
        write(Map.of(
                "docs/a.md", """
                        # A
                        See [b](b.md), [the manifests](../manifests/), [the top](../README.md) and [c](../missing.md).
                        ![a picture](pictures/racks.png) and [a reference][ref], [home](https://example.com/x.md).

                        [ref]: gone.md
                        <p><a href="b.md">b</a>, <a href="c.md">c</a></p>
                        <img src="../pictures/rack.svg" alt="a rack">
                        """,
                "docs/b.md", "# B\n",
                "README.md", "# hetgpu\n",
                "manifests/kustomization.yaml", "resources: []\n"));
        assertFoundOnlyBy(Rule.FILE_LINKS,
                "docs/a.md:2: link to ../missing.md: no file or folder missing.md",
                "docs/a.md:3: image to pictures/racks.png: no file or folder docs/pictures/racks.png",
                "docs/a.md:5: link to gone.md: no file or folder docs/gone.md",
                "docs/a.md:6: link to c.md: no file or folder docs/c.md",
                "docs/a.md:7: image to ../pictures/rack.svg: no file or folder pictures/rack.svg");
    }

    @Test
    void aLinkToAnAnchorNoHeadingHasIsFound() throws Exception {
        write(Map.of(
                "docs/concepts.md", """
                        # Concepts

                        ## Card tiers

                        `NVLink` sets
                        -------------

                        <a id="by-hand"></a>Text.
                        """,
                "docs/install.md", """
                        # Install
                        Read [tiers](concepts.md#card-tiers), [sets](concepts.md#nvlink-sets), [here](concepts.md#by-hand),
                        [this page](#install), then [tiers](concepts.md#tiers) and [nothing](#nothing).
                        """));
        assertFoundOnlyBy(Rule.ANCHORS,
                "docs/install.md:3: link to concepts.md#tiers: no heading with anchor tiers in docs/concepts.md",
                "docs/install.md:3: link to #nothing: no heading with anchor nothing in docs/install.md");
    }

    @Test
    void aRepeatedHeadingsAnchorIsNumbered() throws Exception {
        write(Map.of("docs/a.md", """
                # A
                ## Setup
                ## Setup
                The [second setup](#setup-1) and [a third](#setup-2).
                """));
        assertFoundOnlyBy(Rule.ANCHORS, "docs/a.md:4: link to #setup-2: no heading with anchor setup-2 in docs/a.md");
    }

    @Test
    void aHeadingInACodeBlockGivesNoAnchor() throws Exception {
        write(Map.of("docs/a.md", """
                # A
                ```sh
                # Comment heading
                ```
                    # Indented heading
                [code](#comment-heading), [indented](#indented-heading)
                """));
        assertFoundOnlyBy(Rule.ANCHORS,
                "docs/a.md:6: link to #comment-heading: no heading with anchor comment-heading in docs/a.md",
                "docs/a.md:6: link to #indented-heading: no heading with anchor indented-heading in docs/a.md");
    }

    @Test
    void aLinkInCodeIsNoLink() throws Exception {
        write(Map.of("docs/a.md", """
                # A
                ```markdown
                [x](missing.md) and [y](#missing)
                ```
                Write `[z](missing.md)` for a link.
                """));
        assertThat(check(EnumSet.allOf(Rule.class)).problems()).isEmpty();
    }

    @Test
    void aLauncherCommandTheLauncherDoesNotHaveIsFound() throws Exception {
        write(Map.of("README.md", """
                # hetgpu
                ```
                ./hetgpu demo     # the demo
                ./hetgpu frobnicate --all
                "$(./hetgpu java-home)/bin/java" -jar x.jar
                ```
                `./hetgpu -V`, `./hetgpu bench [allocator|registration|extender|bind]`, `./hetgpu gpu-check-bundle [DIR]`,
                `./hetgpu docs check`, `kubectl hetgpu explain -f job.yaml -o json`, `./hetgpu images test`, `kubectl hetgpu`
                and `kubectl hetgpu why`.
                """));
        assertFoundOnlyBy(Rule.LAUNCHER_COMMANDS,
                "README.md:4: `./hetgpu frobnicate --all`: ./hetgpu has no command frobnicate (its commands: ",
                "README.md:9: `kubectl hetgpu why`: bin/kubectl-hetgpu has no command why (its commands: explain, throughputs, -h, --help, help)");
    }

    @Test
    void anOptionTheCommandDoesNotHaveIsFound() throws Exception {
        write(Map.of("README.md", """
                # hetgpu
                `./hetgpu explain --demo -f manifests/samples/pytorchjob.yaml`, `./hetgpu explain -n ml resnet-worker-0`,
                `./hetgpu explain --demo -f FILE`, `./hetgpu demo --help`, `./hetgpu cluster inventory --gpu-source nvml`,
                `./hetgpu demo --seed N`, `kubectl hetgpu explain --demo=loaded -o json`.

                ```
                ./hetgpu explain --frobnicate --demo -f job.yaml
                kubectl hetgpu explain --why
                ./hetgpu cluster inventry
                ./hetgpu demo --seed many
                ```
                """));
        assertFoundOnlyBy(Rule.COMMAND_ARGUMENTS,
                "README.md:7: `./hetgpu explain --frobnicate --demo -f job.yaml`: Unknown option: '--frobnicate'",
                "README.md:8: `kubectl hetgpu explain --why`: Unknown option: '--why'",
                "README.md:9: `./hetgpu cluster inventry`: Unmatched argument at index 0: 'inventry'",
                "README.md:10: `./hetgpu demo --seed many`: Invalid value for option '--seed': 'many' is not a long");
    }

    @Test
    void aKustomizationOrFileThatIsNotThereIsFound() throws Exception {
        write(Map.of(
                "README.md", """
                        # hetgpu
                        Then `kubectl apply -k manifests/`, `kubectl kustomize manifests/images`, `kubectl apply -f manifests/samples/job.yaml`.
                        ```
                        kubectl apply -k deploy/
                        kubectl apply -k nowhere/ && kubectl kustomize deploy
                        kubectl apply -f manifests/samples/nojob.yaml
                        ```
                        """,
                "manifests/kustomization.yaml", "resources: []\n",
                "manifests/images/kustomization.yaml", "resources: []\n",
                "manifests/samples/job.yaml", "kind: Job\n",
                "deploy/deployment.yaml", "kind: Deployment\n"));
        assertFoundOnlyBy(Rule.KUBECTL_PATHS,
                "README.md:4: `kubectl apply -k deploy/`: deploy/ holds no kustomization.yaml",
                "README.md:5: `kubectl apply -k nowhere/`: no folder nowhere/ in the repository",
                "README.md:5: `kubectl kustomize deploy`: deploy holds no kustomization.yaml",
                "README.md:6: `kubectl apply -f manifests/samples/nojob.yaml`: no file manifests/samples/nojob.yaml in the repository");
    }

    @Test
    void aKubectlCommandKubectlRefusesIsFound() throws Exception {
        Assumptions.assumeTrue(kubectlInstalled() || System.getenv("CI") != null, "kubectl is not on PATH");
        write(Map.of("README.md", """
                # hetgpu
                `kubectl get pods -n hetgpu-system`, `kubectl plugin list`, `kubectl describe pod NAME`.
                ```
                kubectl frobnicate pods
                kubectl get pods --frobnicate
                ```
                """));
        assertFoundOnlyBy(Rule.KUBECTL_COMMANDS,
                "README.md:4: `kubectl frobnicate pods`: kubectl refuses it (`kubectl frobnicate pods --help` exits 1",
                "README.md:5: `kubectl get pods --frobnicate`: kubectl refuses it (`kubectl get pods --frobnicate --help` exits 1");
    }

    @Test
    void aReadmeOverFifteenKilobytesIsFound() throws Exception {
        var page = "# hetgpu\n";
        write(Map.of("README.md", page + "x".repeat((int) DocsCheck.README_MAX_BYTES - page.length())));
        assertThat(check(EnumSet.allOf(Rule.class)).problems()).as("exactly 15 KB").isEmpty();
        write(Map.of("README.md", page + "x".repeat((int) DocsCheck.README_MAX_BYTES - page.length() + 1)));
        assertFoundOnlyBy(Rule.README_SIZE, "README.md:1: 15,361 bytes, over the 15,360 (15 KB) of a front page");
    }

    @Test
    void theCommandPrintsOneLinePerProblemAndExitsOneOnProblems() throws Exception {
        write(Map.of("docs/a.md", "# A\n[b](b.md)\n"));
        var out = new StringWriter();
        var err = new StringWriter();
        int exit = run(out, err, "docs", "check", "--root", root.toString());
        assertThat(exit).as(err.toString()).isEqualTo(1);
        assertThat(out.toString().lines()).containsExactly("docs/a.md:2: link to b.md: no file or folder docs/b.md",
                "docs check: 1 Markdown files, 1 links, 0 commands in README.md: 1 problem");

        write(Map.of("docs/b.md", "# B\n"));
        out = new StringWriter();
        assertThat(run(out, err, "docs", "check", "--root", root.toString())).isZero();
        assertThat(out.toString()).endsWith("no problems" + System.lineSeparator());
    }

    @Test
    void theCommandsHelpAndUsageErrors() throws Exception {
        var out = new StringWriter();
        var err = new StringWriter();
        assertThat(run(out, err, "docs", "check", "--help")).isZero();
        assertThat(out.toString()).contains("Usage:", "--root=DIR", "Exit codes: 0 no problems, 1 problems, 2 bad arguments.");
        assertThat(run(out, err, "docs", "check", "--frobnicate")).isEqualTo(2);
        assertThat(run(out, err, "docs")).isEqualTo(2);
        var empty = Files.createDirectory(root.resolve("empty"));
        assertThat(run(out, err, "docs", "check", "--root", empty.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("not a hetgpu checkout");
    }

    // ---- helpers

    /** Found with every rule, on its line; not found (nothing found) without {@code rule}. */
    private void assertFoundOnlyBy(Rule rule, String... expected) throws IOException {
        var problems = check(EnumSet.allOf(Rule.class)).problems().stream().map(Problem::toString).toList();
        assertThat(problems).hasSize(expected.length);
        for (int i = 0; i < expected.length; i++) {
            assertThat(problems.get(i)).startsWith(expected[i]);
        }
        assertThat(check(EnumSet.complementOf(EnumSet.of(rule))).problems()).as("found without " + rule).isEmpty();
    }

    private DocsCheck.Report check(EnumSet<Rule> rules) throws IOException {
        return new DocsCheck(root, rules, TestClusterMain::commandLine).run();
    }

    /** The pages given, beside the real launcher and kubectl plugin. */
    private void write(Map<String, String> files) throws IOException {
        var checkout = ProjectFiles.manifests().getParent();
        Files.createDirectories(root.resolve("bin"));
        Files.copy(checkout.resolve(DocsCheck.LAUNCHER), root.resolve(DocsCheck.LAUNCHER), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Files.copy(checkout.resolve(DocsCheck.KUBECTL_PLUGIN), root.resolve(DocsCheck.KUBECTL_PLUGIN),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        for (var file : files.entrySet()) {
            var path = root.resolve(file.getKey());
            Files.createDirectories(path.getParent());
            Files.writeString(path, file.getValue());
        }
    }

    private static int run(StringWriter out, StringWriter err, String... args) {
        var commandLine = TestClusterMain.commandLine();
        commandLine.setOut(new PrintWriter(out));
        commandLine.setErr(new PrintWriter(err));
        return commandLine.execute(args);
    }

    private static boolean kubectlInstalled() {
        var path = System.getenv("PATH");
        return path != null && List.of(path.split(File.pathSeparator)).stream()
                .anyMatch(dir -> !dir.isEmpty() && Files.isExecutable(Path.of(dir, "kubectl")));
    }
}
