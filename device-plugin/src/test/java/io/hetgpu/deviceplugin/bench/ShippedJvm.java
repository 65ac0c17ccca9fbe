package io.hetgpu.deviceplugin.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The device plugin's JVM as shipped, read from the files that ship it rather than copied here: the options
 * between {@code java} and {@code -jar} in the image's ENTRYPOINT, and the DaemonSet's JAVA_TOOL_OPTIONS and
 * memory limit (and MALLOC_ARENA_MAX, glibc's, where it sets one). The class-data sharing archive exists only in the image, so its option is left out.
 */
record ShippedJvm(List<String> entrypointOptions, String javaToolOptions, String mallocArenaMax, long memoryLimitMiB) {

    private static final Pattern QUOTED = Pattern.compile("\"([^\"]*)\"");
    private static final Pattern TOOL_OPTIONS =
            Pattern.compile("- name: JAVA_TOOL_OPTIONS\\s+value: \"([^\"]*)\"");
    private static final Pattern ARENAS = Pattern.compile("- name: MALLOC_ARENA_MAX\\s+value: \"(\\d+)\"");
    private static final Pattern LIMIT = Pattern.compile("limits:\\s+memory: (\\d+)Mi");

    static ShippedJvm read(Path dockerfile, Path manifest) throws IOException {
        var entrypoint = Files.readAllLines(dockerfile).stream().filter(line -> line.startsWith("ENTRYPOINT"))
                .reduce((first, last) -> last)
                .orElseThrow(() -> new IllegalArgumentException(dockerfile + ": no ENTRYPOINT line"));
        var words = new ArrayList<String>();
        for (Matcher m = QUOTED.matcher(entrypoint); m.find(); ) {
            words.add(m.group(1));
        }
        int jar = words.indexOf("-jar");
        if (words.isEmpty() || !words.getFirst().equals("java") || jar < 0) {
            throw new IllegalArgumentException(dockerfile + ": ENTRYPOINT is not [\"java\", options..., \"-jar\", jar]: " + entrypoint);
        }
        var options = words.subList(1, jar).stream().filter(o -> !o.startsWith("-XX:SharedArchiveFile=")).toList();
        var yaml = Files.readString(manifest);
        var arenas = ARENAS.matcher(yaml);
        return new ShippedJvm(options, find(TOOL_OPTIONS, yaml, manifest, "env JAVA_TOOL_OPTIONS"),
                arenas.find() ? arenas.group(1) : null, Long.parseLong(find(LIMIT, yaml, manifest, "resources.limits.memory (in Mi)")));
    }

    private static String find(Pattern pattern, String text, Path file, String what) {
        var m = pattern.matcher(text);
        if (!m.find()) {
            throw new IllegalArgumentException(file + ": no " + what);
        }
        return m.group(1);
    }

    /**
     * The command line for the jar: the ENTRYPOINT's options, and {@code -XX:MaxRAM} set to the pod's limit, which
     * the JVM would read from its cgroup in the pod (here it would see the whole machine). JAVA_TOOL_OPTIONS go
     * into the environment, as in the pod.
     */
    List<String> command(String java, Path jar) {
        var command = new ArrayList<String>(List.of(java, "-XX:MaxRAM=" + memoryLimitMiB + "m"));
        // Likewise the collector: under 1792 MB the JVM is no "server class machine" and picks Serial by itself.
        boolean gcChosen = (String.join(" ", entrypointOptions) + " " + javaToolOptions).matches(".*-XX:\\+Use\\w+GC.*");
        if (memoryLimitMiB < 1792 && !gcChosen) {
            command.add("-XX:+UseSerialGC");
        }
        command.addAll(entrypointOptions);
        command.addAll(List.of("-jar", jar.toString()));
        return command;
    }
}
