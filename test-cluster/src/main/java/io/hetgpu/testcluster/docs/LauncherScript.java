package io.hetgpu.testcluster.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The commands a launcher script ({@code hetgpu}, {@code bin/kubectl-hetgpu}) accepts, read from the script itself:
 * the labels of its top-level {@code case … in} statements (those starting in the first column), each with the body
 * that runs it. {@code *)} is no command.
 */
record LauncherScript(Path file, Map<String, String> bodies) {

    private static final Pattern CASE = Pattern.compile("^case\\s.*\\sin\\s*$");
    private static final Pattern LABEL = Pattern.compile("^  ([^\\s)][^)]*)\\)");
    /** How a body hands its arguments to another launcher: {@code exec "$root/hetgpu" explain "$@"}. */
    private static final Pattern HANDS_ON = Pattern.compile("hetgpu\"?\\s+([\\w-]+)\\s+\"\\$@\"");

    static LauncherScript read(Path file) throws IOException {
        // Each label's alternatives share one body, filled in as its lines come.
        var labels = new ArrayList<Map.Entry<String[], StringBuilder>>();
        boolean inCase = false;
        StringBuilder body = null;
        for (var line : Files.readAllLines(file)) {
            if (CASE.matcher(line).matches()) {
                inCase = true;
            } else if (inCase && line.startsWith("esac")) {
                inCase = false;
                body = null;
            } else if (inCase && LABEL.matcher(line).find()) {
                var label = LABEL.matcher(line);
                label.find();
                body = new StringBuilder(line.substring(label.end())).append('\n');
                labels.add(Map.entry(label.group(1).split("\\|"), body));
            } else if (body != null) {
                body.append(line).append('\n');
            }
        }
        var bodies = new LinkedHashMap<String, String>();
        for (var label : labels) {
            for (var alternative : label.getKey()) {
                var name = alternative.strip().replace("\"", "").replace("'", "");
                if (!name.equals("*")) {
                    bodies.putIfAbsent(name, label.getValue().toString());
                }
            }
        }
        return new LauncherScript(file, bodies);
    }

    Set<String> commands() {
        return bodies.keySet();
    }

    boolean accepts(String command) {
        return bodies.containsKey(command);
    }

    /** Whether {@code command}'s body runs {@code mainClass} (its fully qualified name). */
    boolean runs(String command, String mainClass) {
        var body = bodies.get(command);
        return body != null && body.contains(mainClass);
    }

    /** The other launcher's command that {@code command} hands its arguments to, or null. */
    String handsOnTo(String command) {
        var body = bodies.get(command);
        if (body == null) {
            return null;
        }
        var matcher = HANDS_ON.matcher(body);
        return matcher.find() ? matcher.group(1) : null;
    }
}
