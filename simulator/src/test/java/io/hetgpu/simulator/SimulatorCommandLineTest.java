package io.hetgpu.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What `./hetgpu simulate` answers to a wrong argument: one line naming it and its value, before any job is simulated. */
class SimulatorCommandLineTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "--bogus                        | Unknown option: '--bogus'",
            "--jobs 0                       | --jobs: expected at least 1, got 0",
            "--jobs many                    | Invalid value for option '--jobs': 'many' is not an int",
            "--minimum-speed-share 1        | --minimum-speed-share: expected at least 0 and below 1, got 1.0",
            "--report-noise 2               | --report-noise: expected a sigma from 0 to 1, got 2.0",
            "--bogus-reports -0.1           | --bogus-reports: expected a share from 0 to 1, got -0.1",
            "--seeds 10..1                  | --seeds: expected FROM..TO with FROM <= TO, such as 1..10, got \"10..1\"",
            "--config /nonexistent/hetgpu.yaml | --config: config file /nonexistent/hetgpu.yaml does not exist",
            "--policies hetgpu-(no         | Invalid value for option '--policies': expected a regular expression over the policy names, got \"hetgpu-(no\" (Unclosed group at index 10)"})
    void aWrongArgumentIsOneLineNamingItAndItsValue(String args, String message) {
        var out = new StringWriter();
        var err = new StringWriter();
        int status = SimulatorMain.commandLine().setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                .execute(args.split(" "));

        assertThat(status).isEqualTo(2);
        assertThat(err.toString()).isEqualTo("hetgpu-simulator: " + message + " (see --help)" + System.lineSeparator());
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void aReportFolderThatCannotBeMadeIsSaidBeforeAnyRun(@TempDir Path dir) throws Exception {
        var file = Files.writeString(dir.resolve("report"), "not a folder");
        var err = new StringWriter();
        int status = SimulatorMain.commandLine().setOut(new PrintWriter(new StringWriter(), true)).setErr(new PrintWriter(err, true))
                .execute("--out", file.toString());

        assertThat(status).isEqualTo(2);
        assertThat(err.toString()).isEqualTo("hetgpu-simulator: --out: cannot make the folder " + file + " (" + file + " is a file)"
                + " (see --help)" + System.lineSeparator());
        assertThat(Files.readString(file)).isEqualTo("not a folder");
    }
}
