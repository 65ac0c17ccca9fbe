package io.hetgpu.deviceplugin.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The device plugin's JVM as shipped, read from the files that ship it rather than copied here: the options
 * between {@code java} and {@code -jar} in the image's ENTRYPOINT, and the DaemonSet's JAVA_TOOL_OPTIONS and
 * memory limit (and MALLOC_ARENA_MAX, glibc's, where it sets one). The AOT cache exists only in the image, so its option
 * is left out of the ENTRYPOINT's; the image build's training run that makes it is read too ({@link #aotTraining}), so
 * that the benchmark can make the same cache and measure the plugin with it.
 *
 * @param aotTraining the JVM options and program arguments of the Dockerfile's training run, in order, its cache file and
 *                    training folder as {@link #CACHE} and {@link #TRAINING_FOLDER}
 */
record ShippedJvm(List<String> entrypointOptions, String javaToolOptions, String mallocArenaMax, long memoryLimitMiB,
                  AotTraining aotTraining) {

    /** Where the image keeps the cache the ENTRYPOINT names. */
    static final String CACHE_OPTION = "-XX:AOTCache=";

    /**
     * The image build's training run: {@code [NAME=VALUE ...] timeout ... java OPTIONS -jar JAR ARGUMENTS}, as the
     * Dockerfile's RUN line has it.
     *
     * @param environment the variables the RUN line sets for it
     * @param cache       the cache file it writes ({@code -XX:AOTCacheOutput=})
     * @param folder      the folder it serves its plugin socket in
     */
    record AotTraining(Map<String, String> environment, List<String> options, List<String> arguments, String cache, String folder) {

        /** The run with the cache written to {@code cache} and the socket folder {@code folder} instead of the image's paths. */
        List<String> command(String java, Path jar, Path cache, Path folder) {
            var command = new ArrayList<String>(List.of(java));
            options.forEach(option -> command.add(option.replace(this.cache, cache.toString())));
            command.addAll(List.of("-jar", jar.toString()));
            arguments.forEach(argument -> command.add(argument.replace(this.folder, folder.toString())));
            return command;
        }

        /** Its environment with the training folder moved to {@code folder}. */
        Map<String, String> environment(Path folder) {
            var moved = new LinkedHashMap<String, String>();
            environment.forEach((name, value) -> moved.put(name, value.replace(this.folder, folder.toString())));
            return moved;
        }
    }

    private static final Pattern ASSIGNMENT = Pattern.compile("([A-Z_][A-Z0-9_]*)=(\\S*)");
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
        var options = words.subList(1, jar).stream().filter(o -> !o.startsWith(CACHE_OPTION)).toList();
        var yaml = Files.readString(manifest);
        var arenas = ARENAS.matcher(yaml);
        return new ShippedJvm(options, find(TOOL_OPTIONS, yaml, manifest, "env JAVA_TOOL_OPTIONS"),
                arenas.find() ? arenas.group(1) : null, Long.parseLong(find(LIMIT, yaml, manifest, "resources.limits.memory (in Mi)")),
                aotTraining(dockerfile));
    }

    /** The RUN line that writes the AOT cache: its words between {@code java} and the first {@code ;}. */
    static AotTraining aotTraining(Path dockerfile) throws IOException {
        // A RUN instruction may continue over lines ending in a backslash.
        var text = Files.readString(dockerfile).replace("\\\n", " ");
        var run = text.lines().filter(line -> line.startsWith("RUN ") && line.contains("-XX:AOTCacheOutput=")).findFirst()
                .orElseThrow(() -> new IllegalArgumentException(dockerfile + ": no RUN line that writes an AOT cache (-XX:AOTCacheOutput=)"));
        var java = run.indexOf(" java ");
        var environment = new LinkedHashMap<String, String>();
        var before = run.substring(run.lastIndexOf("&&", java) + 2, java);
        for (var word : before.trim().split("\\s+")) {
            var assignment = ASSIGNMENT.matcher(word);
            if (assignment.matches()) {
                environment.put(assignment.group(1), assignment.group(2));
            }
        }
        var command = run.substring(java + " java ".length());
        command = command.substring(0, command.indexOf(';'));
        var words = List.of(command.trim().split("\\s+"));
        int jar = words.indexOf("-jar");
        var options = words.subList(0, jar);
        var cache = options.stream().filter(o -> o.startsWith("-XX:AOTCacheOutput=")).findFirst().orElseThrow()
                .substring("-XX:AOTCacheOutput=".length());
        var arguments = words.subList(jar + 2, words.size());
        var folder = arguments.stream().filter(a -> a.startsWith("--device-plugin-dir=")).findFirst()
                .orElseThrow(() -> new IllegalArgumentException(dockerfile + ": the training run names no --device-plugin-dir"))
                .substring("--device-plugin-dir=".length());
        return new AotTraining(environment, options, arguments, cache, folder);
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
