package io.hetgpu.testcluster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** `./hetgpu demo` refuses a picture it could not write before it starts a cluster, not after the whole demo. */
class DemoCommandTest {

    @TempDir
    Path dir;

    @Test
    void aPictureFolderThatCannotBeMadeIsOneLineBeforeAnyCluster() throws Exception {
        var file = Files.writeString(dir.resolve("pictures"), "not a folder");
        var out = new StringWriter();
        var err = new StringWriter();
        var commandLine = TestClusterMain.commandLine();
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));

        int status = commandLine.execute("demo", "--html", file.resolve("demo.html").toString());

        assertThat(status).isEqualTo(2);
        assertThat(out.toString()).as("nothing of the demo ran").isEmpty();
        assertThat(err.toString().lines().toList()).singleElement().asString()
                .startsWith("hetgpu: --html: cannot make the folder " + file + " (" + file + " is a file)");
    }
}
