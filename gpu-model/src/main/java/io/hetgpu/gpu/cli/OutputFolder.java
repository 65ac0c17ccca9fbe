package io.hetgpu.gpu.cli;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A folder a command writes its report or picture into, made before the command's work: one that cannot be made or
 * written is said at once, with why, instead of after minutes of simulation as the bare path an exception carries.
 */
public final class OutputFolder {

    private OutputFolder() {
    }

    /** Makes {@code folder} where it is missing; returns why it cannot be written in, if it cannot. */
    public static Optional<String> problem(Path folder) {
        try {
            Files.createDirectories(folder);
        } catch (IOException e) {
            return Optional.of("cannot make the folder " + folder + " (" + why(e) + ")");
        }
        return Files.isWritable(folder) ? Optional.empty() : Optional.of("cannot write in the folder " + folder + " (permission denied)");
    }

    private static String why(IOException e) {
        return switch (e) {
            case FileAlreadyExistsException exists -> exists.getFile() + " is a file";
            case AccessDeniedException denied -> "permission denied";
            case NoSuchFileException missing -> "no such file or folder: " + missing.getFile();
            case FileSystemException other when other.getReason() != null -> other.getReason();
            default -> e.getClass().getSimpleName();
        };
    }
}
