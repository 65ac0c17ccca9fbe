package io.hetgpu.deviceplugin.training;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The image build's AOT training run (the Dockerfile's RUN line; {@code ./hetgpu bench registration} runs the same):
 * {@code AotTrainingRun --seconds=N -- OPTIONS -jar JAR ARGUMENTS} runs {@code java OPTIONS -jar JAR ARGUMENTS} (options
 * that name {@code -XX:AOTCacheOutput=}) for N seconds, publishing to a {@link StandInApiServer} over TLS and
 * registering with a {@link TrainingKubelet}, then stops it with SIGTERM, on which the JVM writes the cache.
 *
 * <p>Why stand-ins at build time: the JVM loads every class of the cache at start, and each class a pod loads that
 * the cache does not hold costs more: parsed into metaspace, and read from the runtime's module image, whose pages the
 * pod then holds. Trained with no API server (an address that refused the connection) and no kubelet, the plugin in a
 * pod loaded some 1,440 classes the cache lacked (the TLS handshake, the certificate check, the HTTP exchange, the
 * Node's model, the pod watch, the registration's gRPC) and held 98.9-99.2 MiB once registered on the image's Java
 * runtime; trained here, 92.8-94.4 MiB.
 *
 * <p>The certificate is the API server's own, made by the runtime's {@code keytool}, and the plugin reaches the server
 * as a pod reaches its cluster's: at an IP address from {@code KUBERNETES_SERVICE_HOST}, trusting the certificate
 * through a CA file, so that it checks the chain and the address as it does in a cluster.
 */
public final class AotTrainingRun {

    /** The node the training plugin publishes as, and the one the API server holds. */
    static final String NODE_NAME = "aot-training";

    private AotTrainingRun() {
    }

    public static void main(String[] args) throws Exception {
        int separator = List.of(args).indexOf("--");
        if (args.length == 0 || !args[0].matches("--seconds=[1-9][0-9]?") || separator != 1 || !List.of(args).contains("-jar")) {
            System.err.println("usage: AotTrainingRun --seconds=N -- JVM-OPTIONS -jar JAR ARGUMENTS (N from 1 to 99), got: "
                    + String.join(" ", args));
            System.exit(2);
        }
        int seconds = Integer.parseInt(args[0].substring("--seconds=".length()));
        var plugin = List.of(args).subList(separator + 1, args.length);
        System.exit(run(seconds, plugin));
    }

    private static int run(int seconds, List<String> plugin) throws IOException, InterruptedException, GeneralSecurityException {
        var folder = Files.createTempDirectory("aot-training");
        var podResourcesSocket = folder.resolve("pod-resources.sock");
        try (var apiServer = StandInApiServer.started(folder, NODE_NAME); var kubelet = TrainingKubelet.started(folder, podResourcesSocket)) {
            var command = new ArrayList<String>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(plugin);
            command.addAll(List.of("--node-name=" + NODE_NAME, "--device-plugin-dir=" + folder,
                    "--pod-resources-socket=" + podResourcesSocket));
            var launch = new ProcessBuilder(command).inheritIO();
            // As a pod reaches its cluster: the address, and the CA to check the server's certificate against; no
            // kubeconfig and no other API server of the build machine's.
            launch.environment().remove("JAVA_TOOL_OPTIONS");
            launch.environment().remove("KUBERNETES_MASTER");
            launch.environment().putAll(apiServer.podEnvironment());
            launch.environment().put("KUBECONFIG", folder.resolve("no-kubeconfig").toString());
            var training = launch.start();
            if (!training.waitFor(seconds, TimeUnit.SECONDS)) {
                training.destroy();
            }
            // The JVM writes the cache as it exits.
            if (!training.waitFor(60, TimeUnit.SECONDS)) {
                training.destroyForcibly();
                System.err.println("AotTrainingRun: the training run had not exited 60 s after SIGTERM");
                return 1;
            }
            return 0;
        } finally {
            try (var files = Files.walk(folder)) {
                files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }
}
