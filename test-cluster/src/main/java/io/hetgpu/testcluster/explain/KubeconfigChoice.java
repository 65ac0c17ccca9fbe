package io.hetgpu.testcluster.explain;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.hetgpu.extender.cluster.KubeconfigFile;
import io.hetgpu.gpu.Quote;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The cluster a command run by a person reads, found as kubectl finds it ({@code --kubeconfig}, else
 * {@code $KUBECONFIG}, else {@code ~/.kube/config}, else the pod's service account), shared by {@code explain} and
 * {@code throughputs}: one place that refuses a missing context as kubectl does, and cuts fabric8's retries, since
 * someone is waiting.
 */
public final class KubeconfigChoice {

    private KubeconfigChoice() {
    }

    /** The kubeconfig or context cannot be used: one line, said as a bad argument. */
    public static final class Refused extends Exception {
        Refused(String message) {
            super(message);
        }
    }

    /**
     * A path as the caller means it: relative to the directory the command was typed in, which the launcher passes on
     * ({@code hetgpu.workdir}) because it runs from the checkout.
     */
    public static Path callers(Path path) {
        var workdir = System.getProperty("hetgpu.workdir");
        return path.isAbsolute() || workdir == null || workdir.isBlank() ? path : Path.of(workdir).resolve(path);
    }

    /**
     * The client configuration for {@code kubeconfig} (null: kubectl's default) and {@code context} (null: its current
     * one), its requests named {@code userAgent} so that the API server's audit log tells them from the components'.
     */
    public static Config clientConfig(Path kubeconfig, String context, String userAgent) throws Refused {
        Config config;
        if (kubeconfig != null) {
            try {
                config = KubeconfigFile.read(callers(kubeconfig), context);
            } catch (KubeconfigFile.Unreadable e) {
                throw new Refused("--kubeconfig " + e.getMessage());
            }
        } else {
            var env = System.getenv("KUBECONFIG");
            var home = Path.of(System.getProperty("user.home"), ".kube", "config");
            if ((env == null || env.isBlank()) && !Files.isRegularFile(home) && System.getenv("KUBERNETES_SERVICE_HOST") == null) {
                throw new Refused("no cluster to read: no --kubeconfig, no $KUBECONFIG and no " + home);
            }
            try {
                config = Config.autoConfigure(context);
            } catch (RuntimeException e) {
                throw new Refused("the kubeconfig cannot be read (" + firstLine(e) + ")");
            }
            // fabric8 falls back to the current context when the named one is missing; kubectl refuses, and so does this.
            if (context != null && (config.getCurrentContext() == null || !context.equals(config.getCurrentContext().getName()))) {
                throw new Refused("--context: no context " + Quote.of(context) + " in the kubeconfig ("
                        + (env == null || env.isBlank() ? home : "$KUBECONFIG " + env) + ")");
            }
        }
        if (config.getMasterUrl() == null || config.getMasterUrl().isBlank()) {
            throw new Refused("the kubeconfig names no server" + (context == null ? "" : " for context " + context));
        }
        return new ConfigBuilder(config).withRequestRetryBackoffLimit(1).withConnectionTimeout(10_000).withRequestTimeout(60_000)
                .withUserAgent(userAgent).build();
    }

    /** Why a request got no answer, as a person says it: "connection refused", or the innermost cause's own words. */
    public static String unanswered(Throwable failure) {
        Throwable innermost = failure;
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.net.ConnectException || t instanceof java.nio.channels.ClosedChannelException) {
                return "connection refused: is the API server running, and is this its address?";
            }
            innermost = t;
        }
        return innermost.getMessage() == null || innermost.getMessage().isBlank() ? innermost.getClass().getSimpleName() : innermost.getMessage();
    }

    private static String firstLine(Exception e) {
        var message = e.getMessage() == null ? e.toString() : e.getMessage();
        return message.lines().findFirst().orElse(message);
    }
}
