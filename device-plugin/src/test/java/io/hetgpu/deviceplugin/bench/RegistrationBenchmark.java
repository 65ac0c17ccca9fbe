package io.hetgpu.deviceplugin.bench;

import io.hetgpu.deviceplugin.kubelet.KubeletStandIn;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Figures, not a test: how long the shaded jar takes from process launch to kubelet's Register call,
 * how long re-registration takes after a kubelet restart, and whether SIGTERM removes the socket.
 * Runs the real jar (simulated DGX-1 V100, no API server) against the kubelet stand-in.
 *
 * <pre>./hetgpu mvn -q -pl device-plugin -am package -DskipTests, then run this class with the test classpath:
 *   java -cp device-plugin/target/test-classes:$(cat device-plugin/target/test-classpath.txt) \
 *     io.hetgpu.deviceplugin.bench.RegistrationBenchmark device-plugin/target/hetgpu-device-plugin.jar 5</pre>
 */
public final class RegistrationBenchmark {

    public static void main(String[] args) throws Exception {
        var jar = Path.of(args.length > 0 ? args[0] : "device-plugin/target/hetgpu-device-plugin.jar").toAbsolutePath();
        int restarts = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        var temp = Files.createTempDirectory("hetgpu-bench");
        var folder = Files.createDirectory(temp.resolve("device-plugins"));
        var java = ProcessHandle.current().info().command().orElse("java");
        try (var kubelet = new KubeletStandIn(folder, temp.resolve("pod-resources.sock")).start()) {
            long launched = System.nanoTime();
            var plugin = new ProcessBuilder(java, "-jar", jar.toString(), "--gpu-source", "simulated:dgx1-v100",
                    "--publish-node-inventory", "false", "--device-plugin-dir", folder.toString(), "--http-port", "0")
                    .redirectErrorStream(true).redirectOutput(temp.resolve("plugin.log").toFile()).start();
            var first = kubelet.nextRegistration();
            System.out.printf("process launch -> Register received: %d ms (%s as %s)%n",
                    (System.nanoTime() - launched) / 1_000_000, first.getResourceName(), first.getEndpoint());

            List<Long> again = new ArrayList<>();
            for (int i = 0; i < restarts; i++) {
                long restarted = System.nanoTime();
                kubelet.restart();
                kubelet.nextRegistration();
                again.add((System.nanoTime() - restarted) / 1_000_000);
            }
            System.out.printf("kubelet restart (sockets deleted) -> Register received again, %d rounds: %s ms%n", restarts, again);

            long term = System.nanoTime();
            plugin.destroy(); // SIGTERM
            int code = plugin.waitFor();
            System.out.printf("SIGTERM -> exit %d in %d ms; plugin socket left behind: %s%n", code,
                    (System.nanoTime() - term) / 1_000_000, Files.exists(folder.resolve(first.getEndpoint())));
            System.out.println("plugin log: " + temp.resolve("plugin.log"));
        }
    }
}
