package io.hetgpu.testcluster.manifests;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Assumptions;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

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
        var serialization = new KubernetesSerialization();
        var documents = new ArrayList<ManifestDocument>();
        int position = 0;
        for (var source : ManifestTree.readDocuments(result.stdout())) {
            KubernetesResource parsed = serialization.unmarshal(source.toString());
            if (!(parsed instanceof HasMetadata object)) {
                throw new AssertionError(folder + "#" + position + " renders something that is not a Kubernetes object: " + source);
            }
            documents.add(new ManifestDocument(folder, position++, source, object));
        }
        return new Rendering(folder, documents);
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
        Optional<Path> found = onPath();
        if (found.isPresent()) {
            return found.get();
        }
        String why = "kubectl is not on PATH; the manifests tests render every kustomization with it: " + INSTALL_HINT;
        String ci = System.getenv("CI");
        if (ci != null && !ci.isBlank()) {
            throw new AssertionError(why + " (CI is set, so this fails instead of skipping)");
        }
        Assumptions.abort(why);
        throw new IllegalStateException("unreachable: Assumptions.abort throws");
    }

    private static Optional<Path> onPath() {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, "kubectl");
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
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

    private static Result run(List<String> command) {
        return run(command, Map.of());
    }

    private static Result run(List<String> command, Map<String, String> environment) {
        try {
            var stderr = Files.createTempFile("kubectl", ".err");
            try {
                var builder = new ProcessBuilder(command).redirectError(stderr.toFile());
                builder.environment().putAll(environment);
                var process = builder.start();
                process.getOutputStream().close();
                String stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!process.waitFor(60, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    throw new AssertionError(String.join(" ", command) + " did not finish within 60 s");
                }
                return new Result(process.exitValue(), stdout, Files.readString(stderr));
            } finally {
                Files.deleteIfExists(stderr);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while running " + String.join(" ", command), e);
        }
    }
}
