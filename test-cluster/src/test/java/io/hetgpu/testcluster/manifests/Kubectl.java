package io.hetgpu.testcluster.manifests;


import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The real {@code kubectl} on PATH, which renders kustomizations with the kustomize it bundles: what
 * {@code kubectl apply -k} would send to the API server, not what a hand-rolled reading of the
 * kustomization files suggests.
 *
 * <p>Without kubectl the tests that need it are skipped with the reason, except where the environment
 * variable {@code CI} is set: there they fail, so that a CI machine cannot pass by not rendering.
 */
final class Kubectl {

    static final String INSTALL_HINT = "install Debian's kubectl package (`apt-get install -y kubectl`, from the Kubernetes "
            + "apt repository; Debian's own kubernetes-client is too old for kustomize components). `./hetgpu test` and "
            + ".ci/run install it when it is missing";

    private static final ExternalTool TOOL = new ExternalTool("kubectl", "the manifests tests render every kustomization with it: " + INSTALL_HINT);
    private static final Map<Path, Rendering> RENDERED = new ConcurrentHashMap<>();

    private Kubectl() {
    }

    /** {@code kubectl kustomize folder}, parsed into typed objects; rendered once per test run. */
    static Rendering kustomize(Path folder) {
        return RENDERED.computeIfAbsent(folder.toAbsolutePath().normalize(), Kubectl::render);
    }

    private static Rendering render(Path folder) {
        var result = run(List.of(executable().toString(), "kustomize", folder.toString()));
        if (result.exitCode() != 0) {
            throw new AssertionError("`kubectl kustomize " + folder + "` failed (exit " + result.exitCode() + ", "
                    + version() + "):\n" + result.stderr());
        }
        return Rendering.parse(folder, result.stdout());
    }

    /** {@code kubectl ARGS}'s standard output; fails the test when kubectl exits with an error. */
    static String output(List<String> args) {
        var command = new ArrayList<String>();
        command.add(executable().toString());
        command.addAll(args);
        var result = run(command);
        if (result.exitCode() != 0) {
            throw new AssertionError("`kubectl " + String.join(" ", args) + "` failed (exit " + result.exitCode() + "):\n" + result.stderr());
        }
        return result.stdout();
    }

    /** kubectl's client and kustomize versions, for failure messages. */
    static String version() {
        var result = run(List.of(executable().toString(), "version", "--client"));
        return result.stdout().strip().replace('\n', ' ');
    }

    /** Where kubectl is; skips the calling test (or fails it under CI) when it is not on PATH. */
    static Path executable() {
        return TOOL.executable();
    }

    private static Result run(List<String> command) {
        return run(command, Map.of());
    }

    private static Result run(List<String> command, Map<String, String> environment) {
        var result = TOOL.run(command.subList(1, command.size()), 60, environment);
        return new Result(result.exitCode(), result.stdout(), result.stderr());
    }

    /** How a command ended: its exit code and what it printed. */
    record Result(int exitCode, String stdout, String stderr) {
    }

    /** kubectl run with {@code args} and these environment variables set (a PATH with a plugin on it), however it ends. */
    static Result withEnvironment(List<String> args, Map<String, String> environment) {
        var command = new ArrayList<String>();
        command.add(executable().toString());
        command.addAll(args);
        return run(command, environment);
    }
}
