package io.hetgpu.testcluster.docs;

import io.hetgpu.gpu.release.ReleaseVersion;
import picocli.CommandLine.Command;

/** {@code hetgpu docs}: checks of the documentation. */
@Command(name = "docs", mixinStandardHelpOptions = true, versionProvider = ReleaseVersion.class,
        subcommands = DocsCheckCommand.class,
        description = "Checks of the documentation: `docs check` is the one there is.")
public final class DocsCommand {
}
