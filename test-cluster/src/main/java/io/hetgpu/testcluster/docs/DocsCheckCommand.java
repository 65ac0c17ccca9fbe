package io.hetgpu.testcluster.docs;

import io.hetgpu.gpu.release.ReleaseVersion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code hetgpu docs check}: {@link DocsCheck} over a checkout, one line per problem. */
@Command(name = "check", mixinStandardHelpOptions = true, versionProvider = ReleaseVersion.class,
        description = {"Checks the documentation: its links and anchors, README's commands and size.",
                "",
                "Every relative link and #anchor of every Markdown file of the checkout",
                "resolves (headings slugged as GitHub does; code is not read for links);",
                "every ./hetgpu and kubectl command README.md quotes is accepted (a launcher",
                "command, its options parsed as that command parses them; kubectl's accepted",
                "with --help; -k folders holding a kustomization; -f files there); README.md",
                "is at most " + DocsCheck.README_MAX_BYTES + " bytes. One line per problem, FILE:LINE: what is wrong, then",
                "a summary.",
                "",
                "Exit codes: 0 no problems, 1 problems, 2 bad arguments."})
final class DocsCheckCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--root", paramLabel = "DIR",
            description = {"The checkout to check. Default: the one the current", "folder is in."})
    Path root;

    @Override
    public Integer call() throws Exception {
        var checkout = root != null ? root.toAbsolutePath().normalize() : checkoutAbove(Path.of("").toAbsolutePath());
        if (checkout == null || !Files.isRegularFile(checkout.resolve(DocsCheck.LAUNCHER))) {
            throw new ParameterException(spec.commandLine(), (root != null ? "--root " + root + ": " : "")
                    + "not a hetgpu checkout (no " + DocsCheck.LAUNCHER + " launcher"
                    + (root != null ? " there)" : " in " + Path.of("").toAbsolutePath() + " or above)"));
        }
        var report = new DocsCheck(checkout).run();
        var out = spec.commandLine().getOut();
        report.problems().forEach(out::println);
        report.notes().forEach(note -> spec.commandLine().getErr().println("hetgpu: " + note));
        out.println(report.summary());
        out.flush();
        spec.commandLine().getErr().flush();
        return report.clean() ? 0 : 1;
    }

    /** The folder at or above {@code dir} that holds the launcher and the root pom. */
    private static Path checkoutAbove(Path dir) {
        for (var candidate = dir; candidate != null; candidate = candidate.getParent()) {
            if (Files.isRegularFile(candidate.resolve(DocsCheck.LAUNCHER)) && Files.isRegularFile(candidate.resolve("pom.xml"))) {
                return candidate;
            }
        }
        return null;
    }
}
