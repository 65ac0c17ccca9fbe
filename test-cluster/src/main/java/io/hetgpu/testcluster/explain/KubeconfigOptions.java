package io.hetgpu.testcluster.explain;

import io.fabric8.kubernetes.client.Config;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --kubeconfig} and {@code --context}, as every command that reads a cluster takes them (a picocli mixin). */
public final class KubeconfigOptions {

    @Option(names = "--kubeconfig", paramLabel = "PATH",
            description = {"The cluster to read. Default: $KUBECONFIG, else", "~/.kube/config, as kubectl."})
    Path kubeconfig;

    @Option(names = "--context", paramLabel = "NAME", description = {"The kubeconfig context to use. Default: its", "current context."})
    String context;

    /** Either option was given. */
    public boolean given() {
        return kubeconfig != null || context != null;
    }

    /** The cluster these options name, found as kubectl finds it ({@link KubeconfigChoice}). */
    public Config clientConfig(String userAgent) throws KubeconfigChoice.Refused {
        return KubeconfigChoice.clientConfig(kubeconfig, context, userAgent);
    }
}
