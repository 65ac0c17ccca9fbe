package io.hetgpu.testcluster.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The files of a checkout as its repository has them: in a git checkout, those git tracks or would add
 * ({@code git ls-files --cached --others --exclude-standard}), so build output and other ignored files are not there;
 * elsewhere every file, less {@code .git}, {@code target} and {@code node_modules} folders. Paths relative to the
 * checkout, with {@code /}.
 */
record RepositoryFiles(Path root, Set<String> files, Set<String> folders) {

    /** Folders that are never part of the repository where git cannot say. */
    private static final Set<String> BUILD_FOLDERS = Set.of(".git", "target", "node_modules");

    static RepositoryFiles of(Path root) throws IOException {
        var files = new TreeSet<String>();
        var listed = Files.exists(root.resolve(".git")) ? gitFiles(root) : null;
        if (listed != null) {
            for (var file : listed) {
                // A file deleted but not yet committed as deleted is listed too.
                if (Files.isRegularFile(root.resolve(file))) {
                    files.add(file);
                }
            }
        } else {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                    return !dir.equals(root) && BUILD_FOLDERS.contains(dir.getFileName().toString())
                            ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    if (attrs.isRegularFile()) {
                        files.add(relative(root, file));
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
        }
        var folders = new HashSet<String>();
        folders.add("");
        for (var file : files) {
            for (int slash = file.indexOf('/'); slash >= 0; slash = file.indexOf('/', slash + 1)) {
                folders.add(file.substring(0, slash));
            }
        }
        return new RepositoryFiles(root, files, folders);
    }

    /** The Markdown files, in path order. */
    List<String> markdown() {
        return files.stream().filter(f -> f.endsWith(".md")).toList();
    }

    boolean isFile(String path) {
        return files.contains(path);
    }

    boolean isFolder(String path) {
        return folders.contains(path);
    }

    static String relative(Path root, Path file) {
        return root.relativize(file).toString().replace('\\', '/');
    }

    /** git's list, or null where git is missing or fails. */
    private static List<String> gitFiles(Path root) {
        try {
            var process = new ProcessBuilder("git", "-C", root.toString(), "ls-files", "-z", "--cached", "--others", "--exclude-standard")
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            process.getOutputStream().close();
            var out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                return null;
            }
            return out.isEmpty() ? List.of() : List.of(out.split("\0"));
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UncheckedIOException(new IOException("interrupted while listing the files of " + root, e));
        }
    }
}
