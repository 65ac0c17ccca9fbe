package io.hetgpu.testcluster.manifests;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.hetgpu.deviceplugin.DevicePluginMain;
import io.hetgpu.extender.ExtenderMain;
import picocli.CommandLine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * hetgpu's two programs as their containers run them: the image name the manifests give them (before
 * the images component renames it) and their own picocli command line, so that a test parses a
 * container's arguments exactly as the program would.
 */
enum Program {
    DEVICE_PLUGIN("hetgpu/device-plugin", DevicePluginMain::new),
    SCHEDULER_EXTENDER("hetgpu/scheduler-extender", ExtenderMain::new);

    private static final Pattern REFERENCE = Pattern.compile("\\$\\$|\\$\\(([A-Za-z_][A-Za-z0-9_.-]*)\\)");

    /** The image name in base/, which images/kustomization.yaml maps to the registry's. */
    final String placeholderImage;
    private final Supplier<Object> command;

    Program(String placeholderImage, Supplier<Object> command) {
        this.placeholderImage = placeholderImage;
        this.command = command;
    }

    /** Parses {@code args} with the program's own parser; throws picocli's ParameterException on what it rejects. */
    CommandLine.ParseResult parse(List<String> args) {
        return new CommandLine(command.get()).parseArgs(args.toArray(String[]::new));
    }

    /** The option's value after parsing: the one given, or the program's default. */
    static String value(CommandLine.ParseResult parsed, String option) {
        var spec = parsed.commandSpec().findOption(option);
        if (spec == null) {
            throw new AssertionError(parsed.commandSpec().name() + " has no option " + option);
        }
        Object value = spec.getValue();
        return value == null ? null : value.toString();
    }

    /** The option's default in the program's code. */
    String defaultValue(String option) {
        var spec = new CommandLine(command.get()).getCommandSpec().findOption(option);
        if (spec == null) {
            throw new AssertionError(this + " has no option " + option);
        }
        return spec.defaultValue();
    }

    /**
     * The container's arguments as kubelet hands them over: {@code $(VAR)} replaced by the container's
     * env var VAR ({@code fieldRef}s taken from {@code fields}, e.g. spec.nodeName), {@code $$} by
     * {@code $}, and a reference to a variable the container does not define left as it is (as kubelet
     * leaves it).
     */
    static List<String> expandedArgs(Container container, Map<String, String> fields) {
        var env = new HashMap<String, String>();
        for (EnvVar variable : container.getEnv() == null ? List.<EnvVar>of() : container.getEnv()) {
            if (variable.getValue() != null) {
                env.put(variable.getName(), variable.getValue());
            } else if (variable.getValueFrom() != null && variable.getValueFrom().getFieldRef() != null) {
                String field = variable.getValueFrom().getFieldRef().getFieldPath();
                if (!fields.containsKey(field)) {
                    throw new AssertionError("env " + variable.getName() + " refers to " + field + ", which the test gives no value");
                }
                env.put(variable.getName(), fields.get(field));
            }
        }
        var args = new ArrayList<String>();
        for (String arg : container.getArgs() == null ? List.<String>of() : container.getArgs()) {
            Matcher matcher = REFERENCE.matcher(arg);
            var expanded = new StringBuilder();
            while (matcher.find()) {
                String replacement = matcher.group(1) == null ? "$" : env.getOrDefault(matcher.group(1), matcher.group());
                matcher.appendReplacement(expanded, Matcher.quoteReplacement(replacement));
            }
            matcher.appendTail(expanded);
            args.add(expanded.toString());
        }
        return args;
    }
}
