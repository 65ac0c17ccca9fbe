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
 * memory limit (and MALLOC_ARENA_MAX, glibc's, where it sets one). The AOT caches exist only in the image, so their
 * option is left out of the ENTRYPOINT's; the image build's training runs that make them are read too ({@link #aotTraining},
 * {@link #draAotTraining}), so that the benchmark can make the same caches and measure the plugin with them.
 *
 * @param aotTraining    the Dockerfile's training run of the device plugin
 * @param draAotTraining the Dockerfile's training run of the DRA driver ({@code --kubelet-api=dra})
 */
record ShippedJvm(List<String> entrypointOptions, String javaToolOptions, String mallocArenaMax, long memoryLimitMiB,
                  AotTraining aotTraining, AotTraining draAotTraining) {

    /** Where the image keeps the cache the ENTRYPOINT names. */
    static final String CACHE_OPTION = "-XX:AOTCache=";

    /**
     * The image build's training run: {@code java -cp JAR TRAINER --patience=S -- OPTIONS -jar JAR ARGUMENTS}, as the
     * Dockerfile's RUN line has it: the trainer (in the jar) runs the plugin with OPTIONS and ARGUMENTS against a stand-in
     * API server and kubelet until it has registered and published its Node, for at most S seconds.
     *
     * @param trainer   the words between {@code java} and {@code --}: the class path, the trainer's class and its options
     * @param options   the plugin's JVM options, one of them {@code -XX:AOTCacheOutput=}
     * @param arguments the plugin's program arguments
     * @param jar       the jar's path in the image
     * @param cache     the cache file it writes in the image
     */
    record AotTraining(List<String> trainer, List<String> options, List<String> arguments, String jar, String cache) {

        /** Whether it trains the DRA driver: the plugin's arguments name {@code --kubelet-api=dra}. */
        boolean dra() {
            return arguments.contains("--kubelet-api=dra");
        }

        /** The run with the jar at {@code jar} and the cache written to {@code cache} instead of the image's paths. */
        List<String> command(String java, Path jar, Path cache) {
            var command = new ArrayList<String>(List.of(java));
            trainer.forEach(word -> command.add(word.equals(this.jar) ? jar.toString() : word));
            command.add("--");
            options.forEach(option -> command.add(option.replace(this.cache, cache.toString())));
            command.addAll(List.of("-jar", jar.toString()));
            command.addAll(arguments);
            return command;
        }
    }

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
                aotTraining(dockerfile, false), aotTraining(dockerfile, true));
    }

    /** The one training run of the device plugin, or of the DRA driver. */
    static AotTraining aotTraining(Path dockerfile, boolean dra) throws IOException {
        var runs = aotTrainings(dockerfile).stream().filter(training -> training.dra() == dra).toList();
        if (runs.size() != 1) {
            throw new IllegalArgumentException(dockerfile + ": " + runs.size() + " RUN lines train an AOT cache of the "
                    + (dra ? "DRA driver (--kubelet-api=dra)" : "device plugin") + ", expected one");
        }
        return runs.getFirst();
    }

    /** The RUN lines that write an AOT cache. */
    static List<AotTraining> aotTrainings(Path dockerfile) throws IOException {
        // A RUN instruction may continue over lines ending in a backslash.
        var text = Files.readString(dockerfile).replace("\\\n", " ");
        var runs = new ArrayList<AotTraining>();
        for (var run : text.lines().filter(line -> line.startsWith("RUN ") && line.contains("-XX:AOTCacheOutput=")).toList()) {
            runs.add(aotTraining(dockerfile, run));
        }
        return runs;
    }

    /** A RUN line that writes an AOT cache: its words from {@code java} to the first {@code &&}. */
    private static AotTraining aotTraining(Path dockerfile, String run) {
        var command = run.substring("RUN ".length());
        if (command.contains("&&")) {
            command = command.substring(0, command.indexOf("&&"));
        }
        var words = List.of(command.trim().split("\\s+"));
        int separator = words.indexOf("--");
        int jar = words.indexOf("-jar");
        if (!words.getFirst().equals("java") || separator < 0 || jar < separator || jar + 1 >= words.size()) {
            throw new IllegalArgumentException(dockerfile + ": the training run is not java TRAINER -- OPTIONS -jar JAR ARGUMENTS: " + run);
        }
        var options = words.subList(separator + 1, jar);
        var cache = options.stream().filter(o -> o.startsWith("-XX:AOTCacheOutput=")).findFirst().orElseThrow()
                .substring("-XX:AOTCacheOutput=".length());
        return new AotTraining(words.subList(1, separator), options, words.subList(jar + 2, words.size()), words.get(jar + 1), cache);
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
