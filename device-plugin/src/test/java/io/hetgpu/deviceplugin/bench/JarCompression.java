package io.hetgpu.deviceplugin.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;

/**
 * Rewrites a jar with its entries stored, or deflated again, in their order and with their times, so that the GPU
 * check's folder can carry the shaded plugin jar packed with xz (a deflated jar does not pack) and make it again there:
 * deflated at the level the shade plugin writes, it is the jar the build made, which {@code gpu-check/run} checks by its
 * SHA-256 before measuring anything with it.
 *
 * <pre>java -cp TEST_CLASSES io.hetgpu.deviceplugin.bench.JarCompression store|deflate IN OUT</pre>
 */
public final class JarCompression {

    private JarCompression() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 3 || !(args[0].equals("store") || args[0].equals("deflate"))) {
            System.err.println("usage: JarCompression store|deflate IN OUT");
            System.exit(2);
        }
        rewrite(Path.of(args[1]), Path.of(args[2]), args[0].equals("store"));
    }

    /** {@code out}: {@code in}'s entries, in order, stored ({@code stored}) or deflated at the default level. */
    static void rewrite(Path in, Path out, boolean stored) throws IOException {
        try (var entries = new ZipInputStream(Files.newInputStream(in));
             var rewritten = new ZipOutputStream(Files.newOutputStream(out))) {
            for (var entry = entries.getNextEntry(); entry != null; entry = entries.getNextEntry()) {
                var bytes = entries.readAllBytes();
                var copy = new ZipEntry(entry.getName());
                copy.setTime(entry.getTime());
                copy.setExtra(entry.getExtra());
                copy.setComment(entry.getComment());
                if (stored) {
                    var crc = new CRC32();
                    crc.update(bytes);
                    copy.setMethod(ZipEntry.STORED);
                    copy.setSize(bytes.length);
                    copy.setCompressedSize(bytes.length);
                    copy.setCrc(crc.getValue());
                } else {
                    copy.setMethod(ZipEntry.DEFLATED);
                }
                rewritten.putNextEntry(copy);
                rewritten.write(bytes);
                rewritten.closeEntry();
            }
        }
    }
}
