package io.hetgpu.nvml;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * The sticky marks kept across restarts of the plugin (an upgrade, a crash): one line per GPU, tab-separated,
 * {@code uuid boot-id class most-uncorrected-ecc|- repair-pending-seen reason}. Never throws: a missing
 * file is a clean start; an unreadable file, or a line that does not parse, is logged and skipped, the
 * other lines still count; a failed write is logged and the marks stay in memory.
 *
 * <p>Kubelet deletes every plain file directly in its device-plugins folder when it starts, keeping folders,
 * so the file belongs in a folder of its own there.
 */
public final class StickyMarkFile {

    private static final System.Logger LOG = System.getLogger(StickyMarkFile.class.getName());
    private static final String HEADER = "# hetgpu: GPUs held unhealthy until a reset or reboot (nvml/README.md, Health). "
            + "To clear one by hand, delete its line, then restart the device plugin pod.";

    private final Path file;

    public StickyMarkFile(Path file) {
        this.file = file;
    }

    public Path file() {
        return file;
    }

    public List<StickyMark> load() {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return List.of();
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot read the GPU health marks in {0}, starting without them: {1}", file, e.toString());
            return List.of();
        }
        var marks = new ArrayList<StickyMark>();
        for (int i = 0; i < lines.size(); i++) {
            var line = lines.get(i);
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            try {
                marks.add(parse(line));
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "{0}:{1}: not a GPU health mark, ignored ({2}): {3}", file, i + 1,
                        e.getMessage(), line);
            }
        }
        return marks;
    }

    /** Writes a whole new file and moves it into place, so a crash mid-write leaves the old one intact. */
    public void save(List<StickyMark> marks) {
        var text = new StringBuilder(HEADER).append('\n');
        for (var mark : marks) {
            text.append(format(mark)).append('\n');
        }
        try {
            var folder = file.toAbsolutePath().getParent();
            Files.createDirectories(folder);
            var temporary = Files.createTempFile(folder, file.getFileName().toString(), ".tmp");
            try {
                Files.writeString(temporary, text, StandardCharsets.UTF_8);
                try {
                    Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(temporary);
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot write the GPU health marks to {0}; they hold until this process "
                    + "stops: {1}", file, e.toString());
        }
    }

    static String format(StickyMark mark) {
        return String.join("\t", mark.uuid(), mark.bootId(), mark.xidClass().name(),
                mark.mostUncorrectedEcc().isPresent() ? String.valueOf(mark.mostUncorrectedEcc().getAsLong()) : "-",
                String.valueOf(mark.repairPendingSeen()), mark.reason().replace('\t', ' ').replace('\n', ' '));
    }

    static StickyMark parse(String line) {
        var fields = line.split("\t", -1);
        if (fields.length != 6) {
            throw new IllegalArgumentException("expected 6 tab-separated fields, got " + fields.length);
        }
        for (int i = 0; i < 5; i++) {
            if (fields[i].isBlank()) {
                throw new IllegalArgumentException("field " + (i + 1) + " is empty");
            }
        }
        XidClass xidClass;
        try {
            xidClass = XidClass.valueOf(fields[2]);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown class \"" + fields[2] + "\"");
        }
        OptionalLong ecc;
        try {
            ecc = fields[3].equals("-") ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(fields[3]));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("ECC count \"" + fields[3] + "\" is not a number");
        }
        if (!fields[4].equals("true") && !fields[4].equals("false")) {
            throw new IllegalArgumentException("repair-pending-seen \"" + fields[4] + "\" is not true or false");
        }
        return new StickyMark(fields[0], fields[1], xidClass, fields[5], ecc, Boolean.parseBoolean(fields[4]));
    }
}
