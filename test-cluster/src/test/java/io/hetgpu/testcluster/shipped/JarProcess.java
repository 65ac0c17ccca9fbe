package io.hetgpu.testcluster.shipped;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ThrowingRunnable;

/**
 * A shipped jar in a process of its own ({@code java OPTIONS -jar JAR ARGS}), started with the JDK
 * that runs the tests, a clean environment (the container's, plus what the test names), and its
 * output in a log file.
 */
final class JarProcess implements AutoCloseable {

    private final Process process;
    private final Path log;
    private final List<String> command;

    private JarProcess(Process process, Path log, List<String> command) {
        this.process = process;
        this.log = log;
        this.command = command;
    }

    static JarProcess start(Path jar, List<String> jvmOptions, List<String> args, Map<String, String> env, Path log) {
        var command = new ArrayList<String>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-jar");
        command.add(jar.toString());
        command.addAll(args);
        var builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().clear();
        builder.environment().put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        builder.environment().putAll(env);
        try {
            return new JarProcess(builder.start(), log, List.copyOf(command));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * For an await's {@code failFast}: fails at once, with each one's command and log, as soon as any of the processes has
     * exited, instead of waiting out the await for a program that is gone.
     */
    static ThrowingRunnable stillRunning(JarProcess... processes) {
        return () -> {
            for (var process : processes) {
                assertThat(process.isAlive()).as(process::describe).isTrue();
            }
        };
    }

    /** Runs to the end (for --help and bad flags); returns the exit code. */
    int await(long seconds) {
        try {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("still running after " + seconds + " s: " + describe());
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    boolean isAlive() {
        return process.isAlive();
    }

    String output() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The command line and what it printed, for assertion messages. */
    String describe() {
        return String.join(" ", command) + "\n--- output ---\n" + output();
    }

    /** SIGTERM, as kubelet stops a container; returns the exit code, or fails if it does not stop within 20 s. */
    int stop() {
        process.destroy();
        return await(20);
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
    }
}
