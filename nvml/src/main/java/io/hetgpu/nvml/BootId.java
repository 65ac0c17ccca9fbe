package io.hetgpu.nvml;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * This boot of the node, as the kernel names it: a new random UUID at every boot. The file is not namespaced,
 * so a container reads the host's. A GPU marked in one boot and seen again in another has been through a
 * reboot, which clears every mark.
 */
public final class BootId {

    private static final System.Logger LOG = System.getLogger(BootId.class.getName());
    public static final Path KERNEL_FILE = Path.of("/proc/sys/kernel/random/boot_id");

    private BootId() {
    }

    /** Empty (and logged) where the file cannot be read: not Linux, or /proc hidden. */
    public static Optional<String> read(Path file) {
        try {
            var id = Files.readString(file).strip();
            if (!id.isEmpty() && id.chars().noneMatch(Character::isWhitespace)) {
                return Optional.of(id);
            }
            LOG.log(System.Logger.Level.WARNING, "{0} holds no boot ID", file);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot read the boot ID from {0}: {1}", file, e.toString());
        }
        return Optional.empty();
    }
}
