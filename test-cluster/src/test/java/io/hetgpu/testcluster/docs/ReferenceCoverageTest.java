package io.hetgpu.testcluster.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.deviceplugin.DevicePluginMain;
import io.hetgpu.extender.ExtenderConfig;
import io.hetgpu.extender.ExtenderMain;
import io.hetgpu.extender.job.JobMembershipReader;
import io.hetgpu.extender.policy.ScoreWeights;
import io.hetgpu.testcluster.cli.TestClusterMain;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * docs/reference.md is checked against the code, not hoped: every flag of the programs (read from their picocli
 * models), every field of the extender's configuration file (read from the records its parser reads into) and every
 * job-convention key the extender reads is on the page, in its section, and every row there names something real.
 */
class ReferenceCoverageTest {

    private static String page;

    @BeforeAll
    static void readPage() throws Exception {
        page = Files.readString(ProjectFiles.manifests().getParent().resolve("docs/reference.md"));
    }

    @Test
    void everyFlagOfTheDevicePluginIsInItsSection() {
        assertFlagsDocumented(new CommandLine(new DevicePluginMain()).getCommandSpec(), "### The device plugin");
    }

    @Test
    void everyFlagOfTheExtenderIsInItsSection() {
        assertFlagsDocumented(new CommandLine(new ExtenderMain()).getCommandSpec(), "### The scheduler extender");
    }

    @Test
    void everyOptionOfTheLaunchersClusterCommandsIsInItsSection() {
        var subcommands = TestClusterMain.commandLine().getSubcommands();
        assertThat(subcommands).containsOnlyKeys("demo", "inventory", "explain", "throughputs", "docs", "dra-placement");
        assertFlagsDocumented(subcommands.get("demo").getCommandSpec(), "### `./hetgpu demo`");
        assertFlagsDocumented(subcommands.get("inventory").getCommandSpec(), "### `./hetgpu cluster inventory`");
        assertFlagsDocumented(subcommands.get("dra-placement").getCommandSpec(), "### `./hetgpu cluster dra-placement`");
        assertFlagsDocumented(subcommands.get("explain").getCommandSpec(), "### `./hetgpu explain`");
        assertFlagsDocumented(subcommands.get("throughputs").getCommandSpec(), "### `./hetgpu throughputs`");
        assertThat(subcommands.get("docs").getSubcommands()).containsOnlyKeys("check");
        assertFlagsDocumented(subcommands.get("docs").getSubcommands().get("check").getCommandSpec(), "### `./hetgpu docs check`");
    }

    @Test
    void everyFieldOfTheExtendersConfigurationFileHasItsRow() throws Exception {
        var fields = new ArrayList<String>();
        walk(Class.forName(ExtenderConfig.class.getName() + "$FileConfig"), "", fields);
        assertThat(fields).as("the configuration file's fields").contains("port", "policy.priority.high", "policy.tiers[].rank")
                .hasSizeGreaterThan(25);

        var section = section("## The extender's configuration file");
        assertThat(fields).allSatisfy(field -> assertThat(section)
                .as("docs/reference.md, \"The extender's configuration file\", has a row for %s", field).contains("\n| `" + field + "` |"));

        var table = table(section, "| field | type |");
        var rows = Pattern.compile("(?m)^\\| `([^`]+)` \\|").matcher(table).results().map(m -> m.group(1)).toList();
        assertThat(rows).as("the configuration table's rows name fields the parser reads").isSubsetOf(fields);

        var scorers = Pattern.compile("(?m)^\\| `([^`]+)` \\|").matcher(table(section, "| scorer |")).results().map(m -> m.group(1)).toList();
        assertThat(scorers).as("the scorers' table: every scorer, by the name policy.weights takes").containsExactlyInAnyOrderElementsOf(ScoreWeights.names());
    }

    @Test
    void everyJobConventionKeyIsInTheConventionsTable() throws IllegalAccessException {
        var keys = new ArrayList<String>();
        for (var field : JobMembershipReader.class.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) && Modifier.isPublic(field.getModifiers()) && field.getType() == String.class) {
                keys.add((String) field.get(null));
            }
        }
        assertThat(keys).as("JobMembershipReader's keys").hasSizeGreaterThan(8);
        var section = section("### Job conventions");
        assertThat(keys).allSatisfy(key -> assertThat(section).as("docs/reference.md, \"Job conventions\", names %s", key).contains("`" + key + "`"));
    }

    /** Each option's every name, and each positional parameter's label, is in the section; each flag row there is an option. */
    private static void assertFlagsDocumented(CommandSpec command, String heading) {
        var section = section(heading);
        var names = new ArrayList<String>();
        for (OptionSpec option : command.options()) {
            if (option.hidden() || option.usageHelp() || option.versionHelp()) {
                continue;
            }
            names.addAll(Arrays.asList(option.names()));
        }
        assertThat(names).as(command.name() + "'s options").isNotEmpty();
        assertThat(names).allSatisfy(name -> assertThat(section)
                .as("docs/reference.md, \"%s\", names %s", heading.replaceFirst("^#+ ", ""), name)
                .containsPattern("`" + Pattern.quote(name) + "(?![A-Za-z0-9-])"));
        command.positionalParameters().stream().filter(p -> !p.hidden())
                .forEach(p -> assertThat(section).as("%s names the argument %s", heading, p.paramLabel())
                        .contains("`" + p.paramLabel().replace("...", "") + "`"));

        var documented = Pattern.compile("(?m)^\\| `(--?[A-Za-z][A-Za-z0-9-]*)").matcher(section).results().map(m -> m.group(1)).toList();
        assertThat(documented).as("the flags %s documents are %s's", heading, command.name()).isSubsetOf(names);
    }

    /** The dotted paths of a record's components: a nested record's components under its name, a list of records's under name[]. */
    private static void walk(Class<?> record, String prefix, List<String> paths) {
        for (var component : record.getRecordComponents()) {
            var path = prefix + component.getName();
            var type = component.getType();
            if (type.isRecord()) {
                walk(type, path + ".", paths);
            } else {
                paths.add(path);
                var element = listElement(component.getGenericType());
                if (element instanceof Class<?> elementClass && elementClass.isRecord()) {
                    walk(elementClass, path + "[].", paths);
                }
            }
        }
    }

    private static Type listElement(Type type) {
        return type instanceof ParameterizedType parameterized && parameterized.getRawType() == List.class
                ? parameterized.getActualTypeArguments()[0] : null;
    }

    /** From the heading to the next heading of its level or above. */
    private static String section(String heading) {
        int start = page.indexOf("\n" + heading + "\n");
        assertThat(start).as("docs/reference.md has the heading " + heading).isNotNegative();
        int level = heading.indexOf(' ');
        var next = Pattern.compile("\n#{1," + level + "} ").matcher(page);
        int end = next.find(start + heading.length() + 1) ? next.start() : page.length();
        return page.substring(start, end);
    }

    /** The Markdown table whose header line starts so, up to the blank line after it. */
    private static String table(String section, String header) {
        int start = section.indexOf("\n" + header);
        assertThat(start).as("a table headed " + header).isNotNegative();
        int end = section.indexOf("\n\n", start);
        return section.substring(start, end < 0 ? section.length() : end);
    }
}
