package io.hetgpu.testcluster.shipped;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.hetgpu.testcluster.manifests.ExternalTool;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * Debian's podman, running an image archive as kubelet would run the container a workload describes: its user and
 * group, a read-only root filesystem, no capabilities, no privilege escalation, its mounts (an emptyDir as a tmpfs),
 * its environment and arguments. The container shares this machine's network, so that it reaches the test's API
 * server and kubelet, and the test reaches its ports.
 */
final class ContainerEngine {

    /**
     * podman's settings for these machines (Firecracker VMs, cgroup v1): runc rather than crun, which refuses the hybrid
     * cgroup layout, and none of podman's default ulimits, since the VM refuses setrlimit(RLIMIT_NPROC) on a container's
     * process (EPERM, even to lower it). Neither changes what the test checks: the container's user, read-only root,
     * capabilities, mounts, environment and arguments.
     */
    private static final String CONTAINERS_CONF = """
            [containers]
            default_ulimits = []
            [engine]
            runtime = "runc"
            """;
    static final ExternalTool PODMAN = new ExternalTool("podman", "the image tests run each image with it: install Debian's "
            + "podman package (`apt-get install -y --no-install-recommends podman`); `./hetgpu images test` and .ci/run install it");

    /** A container started in the background; removed when closed. */
    record Running(String name) implements AutoCloseable {
        String logs() {
            var result = podman(List.of("logs", name), 30);
            return result.stdout() + result.stderr();
        }

        boolean isRunning() {
            return podman(List.of("inspect", "--format", "{{.State.Running}}", name), 30).stdout().strip().equals("true");
        }

        String describe() {
            return "container " + name + "\n--- logs ---\n" + logs();
        }

        @Override
        public void close() {
            podman(List.of("rm", "--force", "--time", "10", name), 60);
        }
    }

    private ContainerEngine() {
    }

    /** {@code podman run} of the archive with the container's settings from the manifests, plus {@code extraEnv}. */
    static Running run(Path archive, String name, PodSandbox pod, PodSecurityContext podSecurity, Map<String, String> extraEnv) {
        return run(archive, name, pod, podSecurity, extraEnv, Map.of());
    }

    /**
     * As {@link #run(Path, String, PodSandbox, PodSecurityContext, Map)}, plus folders mounted read-only where kubelet
     * would mount what the manifests do not name (a service account's token and CA, say): this machine's folder to the
     * container's path.
     */
    static Running run(Path archive, String name, PodSandbox pod, PodSecurityContext podSecurity, Map<String, String> extraEnv,
                       Map<Path, String> readOnlyFolders) {
        return run(archive, name, pod, podSecurity, extraEnv, readOnlyFolders, UnaryOperator.identity());
    }

    /**
     * As {@link #run(Path, String, PodSandbox, PodSecurityContext, Map, Map)}, the container's arguments rewritten by
     * {@code args} where the test must stand in for what this machine lacks (a GPU for NVML), and says so.
     */
    static Running run(Path archive, String name, PodSandbox pod, PodSecurityContext podSecurity, Map<String, String> extraEnv,
                       Map<Path, String> readOnlyFolders, UnaryOperator<List<String>> args) {
        var container = pod.container();
        var command = new ArrayList<>(List.of("run", "--detach", "--name", name, "--network", "host"));
        command.addAll(securityOptions(container, podSecurity));
        for (var mount : pod.mounts()) {
            if (mount.emptyDir()) {
                command.addAll(List.of("--tmpfs", mount.mountPath() + ":rw,size=64m,mode=1777"));
            } else {
                command.addAll(List.of("--volume", mount.local().toAbsolutePath() + ":" + mount.mountPath() + (mount.readOnly() ? ":ro" : "")));
            }
        }
        readOnlyFolders.forEach((local, mountPath) -> command.addAll(List.of("--volume", local.toAbsolutePath() + ":" + mountPath + ":ro")));
        pod.containerEnv().forEach((key, value) -> command.addAll(List.of("--env", key + "=" + value)));
        extraEnv.forEach((key, value) -> command.addAll(List.of("--env", key + "=" + value)));
        // A container's command replaces the image's ENTRYPOINT, as kubelet has the runtime do.
        if (container.getCommand() != null && !container.getCommand().isEmpty()) {
            try {
                command.addAll(List.of("--entrypoint", new ObjectMapper().writeValueAsString(container.getCommand())));
            } catch (JsonProcessingException e) {
                throw new UncheckedIOException(e);
            }
        }
        command.add("oci-archive:" + archive.toAbsolutePath());
        command.addAll(args.apply(pod.containerArgs()));
        var result = podman(command, 300);
        if (result.exitCode() != 0) {
            throw new AssertionError("podman " + String.join(" ", command) + " failed (exit " + result.exitCode() + "):\n" + result.stderr());
        }
        return new Running(name);
    }

    static ExternalTool.Result podman(List<String> args, long seconds) {
        try {
            var conf = Files.createTempFile("hetgpu-containers", ".conf");
            try {
                Files.writeString(conf, CONTAINERS_CONF);
                return PODMAN.run(args, seconds, Map.of("CONTAINERS_CONF", conf.toString()));
            } finally {
                Files.deleteIfExists(conf);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The container's securityContext (over the pod's) as podman's options. */
    static List<String> securityOptions(Container container, PodSecurityContext podSecurity) {
        var options = new ArrayList<String>();
        var own = Optional.ofNullable(container.getSecurityContext());
        var user = own.map(s -> s.getRunAsUser()).or(() -> Optional.ofNullable(podSecurity).map(PodSecurityContext::getRunAsUser));
        var group = own.map(s -> s.getRunAsGroup()).or(() -> Optional.ofNullable(podSecurity).map(PodSecurityContext::getRunAsGroup));
        user.ifPresent(uid -> options.addAll(List.of("--user", uid + group.map(gid -> ":" + gid).orElse(""))));
        if (own.map(s -> s.getReadOnlyRootFilesystem()).orElse(false)) {
            // Only what the pod mounts is writable: no tmpfs of podman's own on /tmp, /run, /var/tmp.
            options.addAll(List.of("--read-only", "--read-only-tmpfs=false"));
        }
        own.map(s -> s.getCapabilities()).map(c -> c.getDrop()).orElse(List.of())
                .forEach(cap -> options.addAll(List.of("--cap-drop", cap)));
        if (own.map(s -> s.getAllowPrivilegeEscalation()).map(allowed -> !allowed).orElse(false)) {
            options.addAll(List.of("--security-opt", "no-new-privileges"));
        }
        return options;
    }
}
