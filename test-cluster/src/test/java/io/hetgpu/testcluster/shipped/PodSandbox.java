package io.hetgpu.testcluster.shipped;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One container of a shipped workload, as kubelet would start it, made to run on this machine: its
 * volumes become folders under a root (ConfigMap volumes filled from the manifests' ConfigMaps,
 * host paths wherever the test puts the simulated node's folders), its ports become free loopback
 * ports, and every argument and environment value that names a mount path or a port is rewritten to
 * match. {@code $(VAR)} references are expanded from the container's environment as kubelet does.
 * Nothing else of the container's command line is changed.
 */
final class PodSandbox {

    private static final Pattern PORT_FLAG = Pattern.compile("--[a-z-]*port=([0-9]{1,5})");
    private static final Pattern VAR_REFERENCE = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");

    private final Container container;
    private final Map<String, String> env = new LinkedHashMap<>();
    /** Mount path in the container → folder here, longest first so that nested mounts win. */
    private final Map<String, Path> mounts = new LinkedHashMap<>();
    private final Map<Integer, Integer> ports = new LinkedHashMap<>();
    private final List<Mount> mountList = new ArrayList<>();

    private PodSandbox(Container container) {
        this.container = container;
    }

    /**
     * @param hostPaths where each hostPath volume's path lives on this machine (the simulated node's folders)
     */
    static PodSandbox of(List<HasMetadata> manifests, String kind, String name, String nodeName, Path root,
            Map<String, Path> hostPaths) {
        var containers = template(manifests, kind, name).getSpec().getContainers();
        if (containers.size() != 1) {
            throw new AssertionError(kind + " " + name + ": expected one container, found " + containers.size());
        }
        return of(manifests, kind, name, containers.getFirst().getName(), nodeName, root, hostPaths);
    }

    /** The container named {@code containerName} of a pod that runs several. */
    static PodSandbox of(List<HasMetadata> manifests, String kind, String name, String containerName, String nodeName, Path root,
            Map<String, Path> hostPaths) {
        var template = template(manifests, kind, name);
        var container = template.getSpec().getContainers().stream().filter(c -> c.getName().equals(containerName)).findFirst()
                .orElseThrow(() -> new AssertionError(kind + " " + name + " has no container " + containerName));
        var sandbox = new PodSandbox(container);
        sandbox.mount(manifests, template.getSpec().getVolumes(), root, hostPaths);
        sandbox.allocatePorts();
        sandbox.resolveEnv(nodeName);
        return sandbox;
    }

    /**
     * The container's arguments, expanded and rewritten for this machine. A command that runs the image's jar
     * ({@code java OPTIONS -jar JAR}, as the DRA DaemonSet names its own AOT cache) replaces the ENTRYPOINT, not the
     * program's arguments: its options are {@link #jvmOptions}'.
     */
    List<String> args() {
        var words = new ArrayList<String>();
        if (container.getCommand() != null && !runsTheJar()) {
            words.addAll(container.getCommand());
        }
        if (container.getArgs() != null) {
            words.addAll(container.getArgs());
        }
        return words.stream().map(this::expand).map(this::localize).toList();
    }

    /**
     * The JVM options the container runs its jar with: its command's where it names {@code java OPTIONS -jar JAR}, else
     * the image's ENTRYPOINT's ({@code image}); either way less the options that name files only the image build makes
     * (the AOT caches).
     */
    List<String> jvmOptions(List<String> image) {
        if (!runsTheJar()) {
            return image;
        }
        var command = container.getCommand();
        return command.subList(1, command.indexOf("-jar")).stream().filter(word -> !word.startsWith("-XX:AOTCache=")).toList();
    }

    private boolean runsTheJar() {
        var command = container.getCommand();
        return command != null && !command.isEmpty() && command.getFirst().equals("java") && command.contains("-jar");
    }

    /**
     * The container's arguments as a container engine passes them: expanded, ports rewritten to the free ones (the
     * container shares this machine's network), paths left as they are (the folders are mounted there).
     */
    List<String> containerArgs() {
        var words = new ArrayList<String>();
        if (container.getArgs() != null) {
            words.addAll(container.getArgs());
        }
        return words.stream().map(this::expand).map(this::withLocalPort).toList();
    }

    /** The container's environment as a container engine passes it: ports rewritten, paths as they are. */
    Map<String, String> containerEnv() {
        var inside = new LinkedHashMap<String, String>();
        env.forEach((key, value) -> inside.put(key, withLocalPort(value)));
        return inside;
    }

    /** Each volume mount: the folder here, the path in the container, and whether it is read-only. */
    record Mount(Path local, String mountPath, boolean readOnly, boolean emptyDir) {
    }

    List<Mount> mounts() {
        return List.copyOf(mountList);
    }

    private String withLocalPort(String word) {
        int eq = word.indexOf('=');
        if (eq < 0 || !word.startsWith("-")) {
            return word;
        }
        var value = word.substring(eq + 1);
        if (value.matches("[0-9]{1,5}") && ports.containsKey(Integer.parseInt(value))) {
            return word.substring(0, eq + 1) + ports.get(Integer.parseInt(value));
        }
        return word;
    }

    /** The container's environment, rewritten for this machine. */
    Map<String, String> env() {
        var local = new LinkedHashMap<String, String>();
        env.forEach((key, value) -> local.put(key, String.join(" ", List.of(value.split(" ")).stream().map(this::localize).toList())));
        return local;
    }

    /**
     * The free loopback port that stands in for the port a {@code --flag=PORT} argument names: also a port the container
     * declares none for, because it listens on the pod's loopback address only.
     */
    int flagPort(String flag) {
        var value = args().stream().filter(arg -> arg.startsWith(flag + "=")).findFirst()
                .orElseThrow(() -> new AssertionError("container " + container.getName() + " has no " + flag));
        return Integer.parseInt(value.substring(flag.length() + 1));
    }

    /** The free loopback port that stands in for the container port called {@code name}. */
    int port(String name) {
        return container.getPorts().stream().filter(p -> name.equals(p.getName())).findFirst()
                .map(p -> ports.get(p.getContainerPort()))
                .orElseThrow(() -> new AssertionError("container " + container.getName() + " has no port named " + name));
    }

    Container container() {
        return container;
    }

    Path mountedAt(String mountPath) {
        var path = mounts.get(mountPath);
        if (path == null) {
            throw new AssertionError("nothing is mounted at " + mountPath + " (mounts: " + mounts.keySet() + ")");
        }
        return path;
    }

    private void mount(List<HasMetadata> manifests, List<Volume> volumes, Path root, Map<String, Path> hostPaths) {
        var byName = new LinkedHashMap<String, Volume>();
        volumes.forEach(volume -> byName.put(volume.getName(), volume));
        var list = new ArrayList<VolumeMount>(container.getVolumeMounts());
        list.sort(Comparator.comparing((VolumeMount m) -> m.getMountPath().length()).reversed());
        try {
            for (VolumeMount mount : list) {
                var volume = byName.get(mount.getName());
                if (volume == null) {
                    throw new AssertionError("volumeMount " + mount.getName() + " names no volume of the pod");
                }
                Path local;
                if (volume.getHostPath() != null) {
                    local = hostPaths.get(volume.getHostPath().getPath());
                    if (local == null) {
                        throw new AssertionError("the test gives no folder for hostPath " + volume.getHostPath().getPath());
                    }
                } else {
                    local = Files.createDirectories(root.resolve(volume.getName()));
                    if (volume.getConfigMap() != null) {
                        var configMap = configMap(manifests, volume.getConfigMap().getName());
                        for (var entry : configMap.getData().entrySet()) {
                            Files.writeString(local.resolve(entry.getKey()), entry.getValue());
                        }
                    }
                }
                mounts.put(mount.getMountPath(), local);
                mountList.add(new Mount(local, mount.getMountPath(), Boolean.TRUE.equals(mount.getReadOnly()), volume.getEmptyDir() != null));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every declared port, and every port a {@code --…port=N} argument names (one the pod listens on only on loopback). */
    private void allocatePorts() {
        var wanted = new ArrayList<Integer>();
        container.getPorts().forEach(port -> wanted.add(port.getContainerPort()));
        var words = new ArrayList<String>();
        if (container.getArgs() != null) {
            words.addAll(container.getArgs());
        }
        for (var word : words) {
            var flag = PORT_FLAG.matcher(word);
            if (flag.matches()) {
                wanted.add(Integer.parseInt(flag.group(1)));
            }
        }
        for (int port : wanted) {
            if (ports.containsKey(port)) {
                continue;
            }
            try (var socket = new ServerSocket(0)) {
                ports.put(port, socket.getLocalPort());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private void resolveEnv(String nodeName) {
        for (EnvVar var : container.getEnv()) {
            if (var.getValue() != null) {
                env.put(var.getName(), expand(var.getValue()));
            } else if (var.getValueFrom() != null && var.getValueFrom().getFieldRef() != null
                    && "spec.nodeName".equals(var.getValueFrom().getFieldRef().getFieldPath())) {
                env.put(var.getName(), nodeName);
            } else {
                throw new AssertionError("env " + var.getName() + ": the test knows literal values and spec.nodeName only, got " + var);
            }
        }
    }

    private String expand(String word) {
        Matcher matcher = VAR_REFERENCE.matcher(word);
        var out = new StringBuilder();
        while (matcher.find()) {
            var value = env.get(matcher.group(1));
            // kubelet leaves a reference to an unknown variable as it is.
            matcher.appendReplacement(out, Matcher.quoteReplacement(value == null ? matcher.group() : value));
        }
        return matcher.appendTail(out).toString();
    }

    /** {@code --flag=VALUE} or {@code -Dkey=VALUE}: a VALUE under a mount path or equal to a container port is rewritten. */
    private String localize(String word) {
        int eq = word.indexOf('=');
        if (eq < 0 || !word.startsWith("-")) {
            return word;
        }
        return word.substring(0, eq + 1) + localValue(word.substring(eq + 1));
    }

    private String localValue(String value) {
        for (var mount : mounts.entrySet()) {
            var path = mount.getKey();
            if (value.equals(path) || value.startsWith(path + "/")) {
                return mount.getValue() + value.substring(path.length());
            }
        }
        if (value.matches("[0-9]{1,5}") && ports.containsKey(Integer.parseInt(value))) {
            return Integer.toString(ports.get(Integer.parseInt(value)));
        }
        return value;
    }

    private static PodTemplateSpec template(List<HasMetadata> manifests, String kind, String name) {
        return manifests.stream()
                .filter(o -> o.getKind().equals(kind) && o.getMetadata().getName().equals(name))
                .findFirst()
                .map(o -> switch (o) {
                    case DaemonSet d -> d.getSpec().getTemplate();
                    case Deployment d -> d.getSpec().getTemplate();
                    default -> throw new AssertionError(kind + " is not a workload the test knows");
                })
                .orElseThrow(() -> new AssertionError("no " + kind + " " + name + " in the manifests"));
    }

    private static ConfigMap configMap(List<HasMetadata> manifests, String name) {
        return manifests.stream()
                .filter(o -> o instanceof ConfigMap && o.getMetadata().getName().equals(name))
                .map(ConfigMap.class::cast)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no ConfigMap " + name + " in the manifests"));
    }
}
