package io.hetgpu.deviceplugin.dra;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Files written whole or not at all: a temporary file beside the target, flushed to disk, then renamed over it. A
 * reader (the container runtime reading CDI specs, the plugin reading its checkpoint after a crash) sees the old
 * content or the new, never half of one.
 */
final class AtomicFiles {

    private AtomicFiles() {
    }

    static void write(Path target, byte[] content) throws IOException {
        // A dot name: the CDI cache reads only *.json and *.yaml, so it never sees the temporary file.
        var temporary = target.resolveSibling("." + target.getFileName() + ".tmp");
        try (var channel = FileChannel.open(temporary, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            var buffer = java.nio.ByteBuffer.wrap(content);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            channel.force(true);
        }
        try {
            Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.deleteIfExists(temporary);
            throw e;
        }
    }
}
