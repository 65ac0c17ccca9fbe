package io.hetgpu.testcluster.manifests;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A program from the machine's packages that a test runs (kubectl, promtool, podman). Missing, the test is skipped
 * with the reason, except where the environment variable {@code CI} is set: there it fails, so that a CI machine
 * cannot pass by not running it. {@code ./hetgpu test} and .ci/run install each one.
 */
public record ExternalTool(String name, String installHint) {

    /** What a run printed and how it ended. */
    public record Result(int exitCode, String stdout, String stderr) {
    }

    /** Where the program is; skips the calling test (or fails it under CI) when it is not on PATH. */
    public Path executable() {
        Optional<Path> found = onPath();
        if (found.isPresent()) {
            return found.get();
        }
        String why = name + " is not on PATH: " + installHint;
        String ci = System.getenv("CI");
        if (ci != null && !ci.isBlank()) {
            throw new AssertionError(why + " (CI is set, so this fails instead of skipping)");
        }
        Assumptions.abort(why);
        throw new IllegalStateException("unreachable: Assumptions.abort throws");
    }

    public boolean isInstalled() {
        return onPath().isPresent();
    }

    /** Runs the program with {@code args} and waits for it at most {@code seconds}. */
    public Result run(List<String> args, long seconds) {
        return run(args, seconds, java.util.Map.of());
    }

    /** The same, with {@code env} added to this process's environment. */
    public Result run(List<String> args, long seconds, java.util.Map<String, String> env) {
        var command = new ArrayList<String>();
        command.add(executable().toString());
        command.addAll(args);
        try {
            var stderr = Files.createTempFile(name, ".err");
            var stdout = Files.createTempFile(name, ".out");
            try {
                var builder = new ProcessBuilder(command).redirectError(stderr.toFile()).redirectOutput(stdout.toFile());
                builder.environment().putAll(env);
                var process = builder.start();
                process.getOutputStream().close();
                if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    throw new AssertionError(String.join(" ", command) + " did not finish within " + seconds + " s");
                }
                return new Result(process.exitValue(), Files.readString(stdout, StandardCharsets.UTF_8), Files.readString(stderr));
            } finally {
                Files.deleteIfExists(stderr);
                Files.deleteIfExists(stdout);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while running " + String.join(" ", command), e);
        }
    }

    private Optional<Path> onPath() {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
