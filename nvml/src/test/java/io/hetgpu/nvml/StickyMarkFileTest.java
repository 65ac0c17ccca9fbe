package io.hetgpu.nvml;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StickyMarkFileTest {

    @TempDir
    Path temp;

    private static final StickyMark OFF_THE_BUS = new StickyMark("GPU-a", "boot-1", XidClass.REBOOT_REQUIRED,
            "XID 79 (GPU has fallen off the bus)", OptionalLong.empty(), false);
    private static final StickyMark DBE = new StickyMark("GPU-b", "boot-1", XidClass.RESET_REQUIRED,
            "double-bit ECC error", OptionalLong.of(2), true);

    @Test
    void marksComeBackAsWritten() throws Exception {
        var file = new StickyMarkFile(temp.resolve("hetgpu/gpu-health-marks"));

        file.save(List.of(OFF_THE_BUS, DBE));

        assertThat(file.load()).containsExactly(OFF_THE_BUS, DBE);
        assertThat(Files.readString(file.file())).startsWith("# hetgpu: GPUs held unhealthy");
        try (var leftovers = Files.list(file.file().getParent())) {
            assertThat(leftovers).as("no temporary file left").hasSize(1);
        }
    }

    @Test
    void aMissingFileIsACleanStart() {
        assertThat(new StickyMarkFile(temp.resolve("none/gpu-health-marks")).load()).isEmpty();
    }

    @Test
    void corruptLinesAreSkippedAndTheOthersKept() throws Exception {
        var path = temp.resolve("gpu-health-marks");
        Files.writeString(path, String.join("\n",
                "# header",
                "garbage",
                "GPU-x\tboot-1\tSOMETIMES\t-\tfalse\tXID 1",
                "GPU-x\tboot-1\tRESET_REQUIRED\tmany\tfalse\tXID 48",
                "GPU-x\tboot-1\tAPPLICATION\t-\tfalse\tXID 13",
                "GPU-x\t\tRESET_REQUIRED\t-\tfalse\tXID 48",
                StickyMarkFile.format(DBE),
                "\u0000\u0001binary"));

        assertThat(new StickyMarkFile(path).load()).containsExactly(DBE);
    }

    @Test
    void anUnreadableFileIsACleanStart() throws Exception {
        var folder = Files.createDirectory(temp.resolve("a-folder-not-a-file"));
        Files.write(temp.resolve("latin1"), new byte[] {(byte) 0xff, (byte) 0xfe, 0x00});

        assertThat(new StickyMarkFile(folder).load()).isEmpty();
        assertThat(new StickyMarkFile(temp.resolve("latin1")).load()).isEmpty();
    }

    @Test
    void aFailedWriteIsLoggedNotThrown() throws Exception {
        var blocker = Files.writeString(temp.resolve("blocker"), "a file where the folder should be");

        new StickyMarkFile(blocker.resolve("gpu-health-marks")).save(List.of(DBE));

        assertThat(Files.readString(blocker)).isEqualTo("a file where the folder should be");
    }

    @Test
    void reasonsCannotBreakTheLineFormat() {
        var odd = new StickyMark("GPU-c", "boot-1", XidClass.RESET_REQUIRED, "two\tfields\nand a line", OptionalLong.empty(), false);

        assertThat(StickyMarkFile.parse(StickyMarkFile.format(odd)).reason()).isEqualTo("two fields and a line");
    }
}
