package io.hetgpu.deviceplugin.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Java runtime the images ship, made by {@code images/java-runtime} from the JDK running the benchmark: what the
 * plugin holds depends on the runtime as well as on the jar. Made once per JDK and script, as it takes half a minute.
 */
final class ImagesRuntime {

    private static final Path SCRIPT = Path.of("images/java-runtime");

    private ImagesRuntime() {
    }

    /** The runtime in {@code folder}, made there first unless the one there came from this JDK and this script. */
    static Path madeIn(Path folder) throws IOException, InterruptedException {
        var stamp = folder.resolveSibling(folder.getFileName() + ".stamp");
        var madeBy = Runtime.version() + " " + System.getProperty("java.home") + " " + sha256(SCRIPT);
        if (Files.isExecutable(folder.resolve("bin/java")) && Files.exists(stamp) && Files.readString(stamp).equals(madeBy)) {
            return folder;
        }
        System.out.println("making the images' Java runtime in " + folder + " (" + SCRIPT + ") ...");
        var script = new ProcessBuilder("bash", SCRIPT.toString(), System.getProperty("java.home"), folder.toString()).inheritIO().start();
        if (script.waitFor() != 0) {
            throw new IOException(SCRIPT + " failed (exit " + script.exitValue() + ")");
        }
        Files.writeString(stamp, madeBy);
        return folder;
    }

    private static String sha256(Path file) throws IOException {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256, which every Java runtime has, is missing", e);
        }
    }
}
