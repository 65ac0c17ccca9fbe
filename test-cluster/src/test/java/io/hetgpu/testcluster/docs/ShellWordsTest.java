package io.hetgpu.testcluster.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.testcluster.docs.ShellWords.Command;
import java.util.List;
import org.junit.jupiter.api.Test;

class ShellWordsTest {

    @Test
    void splitsCommandsAsAShellDoes() {
        var text = """
                ./hetgpu demo     # the demo: an 11-node cluster
                cd x && CI=1 ./hetgpu explain --demo \\
                    -f 'a b.yaml'
                "$(./hetgpu java-home)/bin/java" -jar x.jar | tee log
                """;
        assertThat(ShellWords.commands(text)).containsExactly(
                new Command(3, List.of("./hetgpu", "java-home")),
                new Command(0, List.of("./hetgpu", "demo")),
                new Command(1, List.of("cd", "x")),
                new Command(1, List.of("./hetgpu", "explain", "--demo", "-f", "a b.yaml")),
                new Command(3, List.of("SUBSTITUTION/bin/java", "-jar", "x.jar")),
                new Command(3, List.of("tee", "log")));
    }

    @Test
    void placeholdersAreWhatTheReaderFillsIn() {
        assertThat(List.of("[DIR]", "<goals>", "FILE", "N", "...", "…", "--floor=DIR", "[allocator")).allMatch(ShellWords::placeholder);
        assertThat(List.of("demo", "-V", "--demo=loaded", "manifests/", "simulated:dgx1-v100", "301..310")).noneMatch(ShellWords::placeholder);
    }
}
