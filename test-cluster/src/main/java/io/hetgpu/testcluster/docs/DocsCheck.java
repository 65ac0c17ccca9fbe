package io.hetgpu.testcluster.docs;

import io.hetgpu.testcluster.cli.TestClusterMain;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.ParameterException;

/**
 * The docs check: every relative link and anchor of every Markdown file of the checkout resolves, every
 * {@code ./hetgpu …} and {@code kubectl …} command README.md quotes is one the launcher (or kubectl) accepts, and
 * README.md stays a front page. {@code ./hetgpu docs check} runs it, and so does the suite (DocsCheckoutTest).
 */
public final class DocsCheck {

    /** The most README.md may weigh: a front page, the rest in docs/. */
    public static final long README_MAX_BYTES = 15 * 1024;
    /** The page whose quoted commands are checked. */
    public static final String README = "README.md";
    /** The launcher, and the kubectl plugin that hands its commands to it. */
    static final String LAUNCHER = "hetgpu";
    static final String KUBECTL_PLUGIN = "bin/kubectl-hetgpu";
    /** The main class whose picocli commands the launcher's commands run, where they run it. */
    static final String TEST_CLUSTER_MAIN = TestClusterMain.class.getName();
    /** The folder names that make a folder a kustomization, as kubectl's kustomize looks for them. */
    private static final List<String> KUSTOMIZATION_FILES = List.of("kustomization.yaml", "kustomization.yml", "Kustomization");
    private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");

    /** What the check looks at; a test leaves one out to show that the others do not find what it finds. */
    public enum Rule {
        /** A relative link's file or folder exists in the repository. */
        FILE_LINKS,
        /** A link's {@code #anchor} is a heading's (or an {@code <a id>}'s) in the page it names. */
        ANCHORS,
        /** A quoted {@code ./hetgpu X} or {@code kubectl hetgpu X}: X is a command of the launcher. */
        LAUNCHER_COMMANDS,
        /** Its arguments parse as the picocli command it runs parses them, and that command's {@code --help} works. */
        COMMAND_ARGUMENTS,
        /** A quoted kubectl's {@code -k DIR} (and {@code kustomize DIR}) is a kustomization, its {@code -f FILE} exists. */
        KUBECTL_PATHS,
        /** A quoted kubectl command with {@code --help} added exits 0 with the real kubectl. */
        KUBECTL_COMMANDS,
        /** README.md is at most {@link #README_MAX_BYTES}. */
        README_SIZE
    }

    /** One problem, {@code FILE:LINE: what is wrong}. */
    public record Problem(String file, int line, String message) {
        @Override
        public String toString() {
            return file + ":" + line + ": " + message;
        }
    }

    /** What the check found; {@code notes} say what it could not check and why. */
    public record Report(List<Problem> problems, List<String> notes, int pages, int links, int commands) {
        public boolean clean() {
            return problems.isEmpty();
        }

        /** The closing line. */
        public String summary() {
            var counted = pages + " Markdown files, " + links + " links, " + commands + " commands in " + README;
            return "docs check: " + counted + ": " + (problems.isEmpty() ? "no problems"
                    : problems.size() + (problems.size() == 1 ? " problem" : " problems"));
        }
    }

    private final Path root;
    private final Set<Rule> rules;
    private final Supplier<CommandLine> commandLines;
    private final List<Problem> problems = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private final Map<String, MarkdownPage> pages = new HashMap<>();
    private final Set<List<String>> helpChecked = new HashSet<>();
    private final Map<List<String>, Optional<String>> kubectlChecked = new HashMap<>();
    private RepositoryFiles files;
    private LauncherScript launcher;
    private LauncherScript plugin;
    private Path kubectl;
    private boolean kubectlLooked;
    private Set<String> subcommands;
    private int links;
    private int commands;

    /** Every rule over the checkout at {@code root}, the commands read as TestClusterMain builds them. */
    public DocsCheck(Path root) {
        this(root, EnumSet.allOf(Rule.class), TestClusterMain::commandLine);
    }

    public DocsCheck(Path root, Set<Rule> rules, Supplier<CommandLine> commandLines) {
        this.root = root.toAbsolutePath().normalize();
        this.rules = rules.isEmpty() ? EnumSet.noneOf(Rule.class) : EnumSet.copyOf(rules);
        this.commandLines = commandLines;
    }

    /** Runs the check once; the problems come in file and line order. */
    public Report run() throws IOException {
        files = RepositoryFiles.of(root);
        launcher = LauncherScript.read(root.resolve(LAUNCHER));
        plugin = Files.isRegularFile(root.resolve(KUBECTL_PLUGIN)) ? LauncherScript.read(root.resolve(KUBECTL_PLUGIN)) : null;
        for (var path : files.markdown()) {
            page(path);
        }
        for (var path : files.markdown()) {
            checkLinks(pages.get(path));
        }
        var readme = pages.get(README);
        if (readme != null) {
            checkCommands(readme);
        }
        if (rules.contains(Rule.README_SIZE) && files.isFile(README)) {
            long size = Files.size(root.resolve(README));
            if (size > README_MAX_BYTES) {
                problems.add(new Problem(README, 1, String.format("%,d bytes, over the %,d (15 KB) of a front page: move sections to docs/",
                        size, README_MAX_BYTES)));
            }
        }
        var sorted = problems.stream().sorted(Comparator.comparing(Problem::file).thenComparingInt(Problem::line)).toList();
        return new Report(sorted, List.copyOf(notes), pages.size(), links, commands);
    }

    private MarkdownPage page(String path) throws IOException {
        var page = pages.get(path);
        if (page == null) {
            page = MarkdownPage.parse(path, Files.readString(root.resolve(path), StandardCharsets.UTF_8));
            pages.put(path, page);
        }
        return page;
    }

    // ---- links and anchors

    private void checkLinks(MarkdownPage page) throws IOException {
        for (var target : page.targets()) {
            var destination = target.destination().strip();
            if (destination.isEmpty() || SCHEME.matcher(destination).find() || destination.startsWith("//")) {
                continue;
            }
            links++;
            var problem = problem(page.path(), destination);
            if (problem != null) {
                problems.add(new Problem(page.path(), target.line(), target.kind() + " to " + destination + ": " + problem));
            }
        }
    }

    /** What is wrong with a relative link from {@code from}, or null. */
    private String problem(String from, String destination) throws IOException {
        int hash = destination.indexOf('#');
        var path = decode(hash < 0 ? destination : destination.substring(0, hash));
        var anchor = hash < 0 ? null : decode(destination.substring(hash + 1));
        int query = path.indexOf('?');
        if (query >= 0) {
            path = path.substring(0, query);
        }
        String target;
        if (path.isEmpty()) {
            target = from;
        } else {
            var base = path.startsWith("/") ? root : root.resolve(from).getParent();
            var resolved = base.resolve(path.startsWith("/") ? path.substring(1) : path).normalize();
            if (!resolved.startsWith(root)) {
                return rules.contains(Rule.FILE_LINKS) ? "leads out of the repository" : null;
            }
            target = RepositoryFiles.relative(root, resolved);
            if (!files.isFile(target) && !files.isFolder(target)) {
                if (!rules.contains(Rule.FILE_LINKS)) {
                    return null;
                }
                return Files.exists(resolved) ? target + " is not in the repository (git ignores it)" : "no file or folder " + target;
            }
        }
        if (anchor == null || anchor.isEmpty() || !rules.contains(Rule.ANCHORS) || !files.isFile(target) || !target.endsWith(".md")) {
            return null;
        }
        return page(target).anchors().contains(anchor) ? null : "no heading with anchor " + anchor + " in " + target;
    }

    private static String decode(String text) {
        return text.contains("%") ? URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8) : text;
    }

    // ---- commands quoted in README.md

    private void checkCommands(MarkdownPage page) throws IOException {
        for (var code : page.code()) {
            for (var command : ShellWords.commands(code.text())) {
                var words = command.words();
                int line = code.line() + command.line();
                if (words.get(0).equals("./" + LAUNCHER)) {
                    commands++;
                    checkLauncher(page.path(), line, String.join(" ", words), words.subList(1, words.size()));
                } else if (words.get(0).equals("kubectl")) {
                    commands++;
                    checkKubectl(page.path(), line, String.join(" ", words), words.subList(1, words.size()));
                }
            }
        }
    }

    /** The words up to the first placeholder ({@code [DIR]}, {@code FILE}, …). */
    private static List<String> checkable(List<String> args) {
        for (int i = 0; i < args.size(); i++) {
            if (ShellWords.placeholder(args.get(i))) {
                return args.subList(0, i);
            }
        }
        return args;
    }

    private void checkLauncher(String file, int line, String quoted, List<String> words) {
        var args = checkable(words);
        boolean cut = args.size() < words.size();
        if (args.isEmpty()) {
            return;
        }
        var command = args.get(0);
        if (!launcher.accepts(command)) {
            if (rules.contains(Rule.LAUNCHER_COMMANDS)) {
                problems.add(new Problem(file, line, "`" + quoted + "`: ./" + LAUNCHER + " has no command " + command
                        + " (its commands: " + String.join(", ", launcher.commands()) + ")"));
            }
            return;
        }
        if (!rules.contains(Rule.COMMAND_ARGUMENTS) || !launcher.runs(command, TEST_CLUSTER_MAIN)) {
            return;
        }
        // `./hetgpu explain ARGS` runs TestClusterMain explain ARGS; `./hetgpu cluster ARGS` runs TestClusterMain ARGS.
        var argv = new ArrayList<String>();
        if (subcommands().contains(command)) {
            argv.add(command);
        }
        argv.addAll(args.subList(1, args.size()));
        var problem = parse(argv, cut);
        if (problem != null) {
            problems.add(new Problem(file, line, "`" + quoted + "`: " + problem));
        }
    }

    private Set<String> subcommands() {
        if (subcommands == null) {
            subcommands = Set.copyOf(commandLines.get().getSubcommands().keySet());
        }
        return subcommands;
    }

    /** Whether {@code argv} parses (not run) as TestClusterMain's; then whether the command it reaches answers --help. */
    private String parse(List<String> argv, boolean cut) {
        CommandLine.ParseResult parsed;
        try {
            parsed = commandLines.get().parseArgs(argv.toArray(String[]::new));
        } catch (MissingParameterException e) {
            // `-f FILE` cut at FILE: the option without its placeholder value is not the README's mistake.
            var last = argv.isEmpty() ? "" : argv.get(argv.size() - 1);
            if (!cut || !last.startsWith("-")) {
                return e.getMessage();
            }
            return parse(argv.subList(0, argv.size() - 1), false);
        } catch (ParameterException e) {
            return e.getMessage();
        }
        var path = new ArrayList<String>();
        for (var sub = parsed.subcommand(); sub != null; sub = sub.subcommand()) {
            path.add(sub.commandSpec().name());
        }
        if (!helpChecked.add(path)) {
            return null;
        }
        var out = new StringWriter();
        var err = new StringWriter();
        var help = commandLines.get();
        help.setOut(new PrintWriter(out));
        help.setErr(new PrintWriter(err));
        var helpArgs = new ArrayList<>(path);
        helpArgs.add("--help");
        int exit = help.execute(helpArgs.toArray(String[]::new));
        if (exit != 0 || out.toString().isBlank()) {
            return "its --help (" + String.join(" ", helpArgs) + ") exits " + exit + (err.toString().isBlank() ? "" : ": " + err.toString().strip());
        }
        return null;
    }

    private void checkKubectl(String file, int line, String quoted, List<String> words) throws IOException {
        var args = checkable(words);
        if (args.isEmpty()) {
            return;
        }
        if (args.get(0).equals("hetgpu")) {
            checkPlugin(file, line, quoted, args.subList(1, args.size()), args.size() < words.size());
            return;
        }
        if (rules.contains(Rule.KUBECTL_PATHS)) {
            checkKubectlPaths(file, line, quoted, args);
        }
        if (rules.contains(Rule.KUBECTL_COMMANDS)) {
            var problem = kubectlHelp(file, line, args);
            if (problem != null) {
                problems.add(new Problem(file, line, "`" + quoted + "`: " + problem));
            }
        }
    }

    /** {@code kubectl hetgpu X ARGS}: X is the plugin's, and where it hands on to {@code ./hetgpu X}, checked as that. */
    private void checkPlugin(String file, int line, String quoted, List<String> args, boolean cut) {
        if (plugin == null) {
            if (rules.contains(Rule.LAUNCHER_COMMANDS)) {
                problems.add(new Problem(file, line, "`" + quoted + "`: there is no " + KUBECTL_PLUGIN));
            }
            return;
        }
        var command = args.isEmpty() ? "" : args.get(0);
        if (!plugin.accepts(command)) {
            if (rules.contains(Rule.LAUNCHER_COMMANDS)) {
                problems.add(new Problem(file, line, "`" + quoted + "`: " + KUBECTL_PLUGIN + " has no command " + command
                        + " (its commands: " + String.join(", ", plugin.commands().stream().filter(c -> !c.isEmpty()).toList()) + ")"));
            }
            return;
        }
        var handedTo = plugin.handsOnTo(command);
        if (handedTo != null) {
            var launcherWords = new ArrayList<String>();
            launcherWords.add(handedTo);
            launcherWords.addAll(args.subList(1, args.size()));
            if (cut) {
                // Keep the cut where it was, so that an option left without its value is forgiven as there.
                launcherWords.add("[…]");
            }
            checkLauncher(file, line, quoted, launcherWords);
        }
    }

    private void checkKubectlPaths(String file, int line, String quoted, List<String> args) {
        boolean kustomizeVerb = false;
        for (int i = 0; i < args.size(); i++) {
            var arg = args.get(i);
            String kustomization = null;
            String manifest = null;
            if ((arg.equals("-k") || arg.equals("--kustomize")) && i + 1 < args.size()) {
                kustomization = args.get(++i);
            } else if (arg.startsWith("--kustomize=")) {
                kustomization = arg.substring("--kustomize=".length());
            } else if (arg.startsWith("-k") && arg.length() > 2) {
                kustomization = arg.substring(arg.startsWith("-k=") ? 3 : 2);
            } else if ((arg.equals("-f") || arg.equals("--filename")) && i + 1 < args.size()) {
                manifest = args.get(++i);
            } else if (arg.startsWith("--filename=")) {
                manifest = arg.substring("--filename=".length());
            } else if (arg.startsWith("-f") && arg.length() > 2 && !arg.startsWith("--")) {
                manifest = arg.substring(arg.startsWith("-f=") ? 3 : 2);
            } else if (arg.equals("kustomize") && i == 0) {
                kustomizeVerb = true;
            } else if (kustomizeVerb && !arg.startsWith("-")) {
                kustomization = arg;
                kustomizeVerb = false;
            }
            if (kustomization != null && !SCHEME.matcher(kustomization).find()) {
                var folder = inRepository(kustomization);
                if (folder == null || !files.isFolder(folder)) {
                    problems.add(new Problem(file, line, "`" + quoted + "`: no folder " + kustomization + " in the repository"));
                } else if (KUSTOMIZATION_FILES.stream().noneMatch(name -> files.isFile(folder.isEmpty() ? name : folder + "/" + name))) {
                    problems.add(new Problem(file, line, "`" + quoted + "`: " + kustomization + " holds no kustomization.yaml"));
                }
            }
            if (manifest != null && !manifest.equals("-") && !SCHEME.matcher(manifest).find()) {
                var path = inRepository(manifest);
                if (path == null || !(files.isFile(path) || files.isFolder(path))) {
                    problems.add(new Problem(file, line, "`" + quoted + "`: no file " + manifest + " in the repository"));
                }
            }
        }
    }

    /** A path as README's commands give it, from the checkout's root; null where it leads out. */
    private String inRepository(String path) {
        var resolved = root.resolve(path).normalize();
        return resolved.startsWith(root) ? RepositoryFiles.relative(root, resolved) : null;
    }

    /** {@code kubectl ARGS --help} with the real kubectl, once per ARGS; where kubectl is missing, a note (under CI, a problem). */
    private String kubectlHelp(String file, int line, List<String> args) throws IOException {
        if (!kubectlLooked) {
            kubectlLooked = true;
            kubectl = onPath("kubectl");
            if (kubectl == null) {
                var why = "kubectl is not on PATH, so the kubectl commands of " + README + " were not run with --help "
                        + "(install Debian's kubectl package, from the Kubernetes apt repository; `./hetgpu test` installs it)";
                var ci = System.getenv("CI");
                if (ci != null && !ci.isBlank()) {
                    problems.add(new Problem(file, line, why + "; CI is set, so this fails instead of skipping"));
                } else {
                    notes.add(why);
                }
            }
        }
        if (kubectl == null) {
            return null;
        }
        var cached = kubectlChecked.get(args);
        if (cached != null) {
            return cached.orElse(null);
        }
        var command = new ArrayList<String>();
        command.add(kubectl.toString());
        command.addAll(args);
        command.add("--help");
        String problem;
        try {
            var process = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            process.getOutputStream().close();
            var err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                problem = "`kubectl " + String.join(" ", args) + " --help` did not finish in 20 s";
            } else if (process.exitValue() != 0) {
                problem = "kubectl refuses it (`kubectl " + String.join(" ", args) + " --help` exits " + process.exitValue() + ": "
                        + err.strip().lines().findFirst().orElse("") + ")";
            } else {
                problem = null;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running kubectl", e);
        }
        kubectlChecked.put(List.copyOf(args), Optional.ofNullable(problem));
        return problem;
    }

    private static Path onPath(String name) {
        var path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (var dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty()) {
                var candidate = Path.of(dir, name);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return candidate;
                }
            }
        }
        return null;
    }
}
