package io.hetgpu.testcluster.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The scheduler extender's container in every rendered install: the JVM's heap plus its native memory fits the
 * memory limit (else the kernel kills the pod under load, as 32 parallel 5,000-node requests once did at
 * 1,642 MiB of a 1,536 MiB limit), a broken JVM exits, and the probes can be answered in time over the right scheme.
 */
class ExtenderMemoryAndProbesTest {

    private static final long MIB = 1024 * 1024;
    /**
     * Native memory outside the capped pools: thread stacks (event loops, workers, informers: about 60 threads,
     * under 0.3 MiB of stack touched each), the serial collector's card table and the JVM's own tables (symbols,
     * strings, class data: 40 to 60 MiB measured), and glibc's heaps held to MALLOC_ARENA_MAX arenas. The soak
     * benchmark measures the whole: its peak RSS must stay under heap + capped pools + this.
     */
    static final long OTHER_NATIVE = 128 * MIB;
    /** The slowest /healthz answer under the soak benchmark's 64 clients was well under 1 s; the probe allows twice that. */
    static final int MEASURED_PROBE_SECONDS = 1;

    static List<Path> installs() {
        return KustomizationsTest.installs();
    }

    @ParameterizedTest
    @MethodSource("installs")
    void heapAndNativeMemoryFitTheLimitAndABrokenJvmExits(Path folder) {
        for (var running : extenders(folder)) {
            var container = running.container();
            var env = env(container.getEnv());
            var flags = List.of(env.getOrDefault("JAVA_TOOL_OPTIONS", "").trim().split("\\s+"));
            var limits = container.getResources().getLimits();
            assertThat(limits).as(running.describe() + " memory limit").containsKey("memory");
            long limit = Quantity.getAmountInBytes(limits.get("memory")).longValueExact();

            long heap = option(flags, "-Xmx").map(ExtenderMemoryAndProbesTest::bytes)
                    .or(() -> option(flags, "-XX:MaxRAMPercentage=").map(p -> (long) (Double.parseDouble(p) / 100 * limit)))
                    .orElseThrow(() -> new AssertionError(running.describe() + ": neither -Xmx nor -XX:MaxRAMPercentage in " + flags));
            long metaspace = required(flags, "-XX:MaxMetaspaceSize=", running);
            long codeCache = required(flags, "-XX:ReservedCodeCacheSize=", running);
            long direct = required(flags, "-XX:MaxDirectMemorySize=", running);
            long total = heap + metaspace + codeCache + direct + OTHER_NATIVE;

            assertThat(total).as("%s: heap %d MiB + metaspace %d + code cache %d + direct %d + other native %d MiB = %d MiB, limit %d MiB",
                    running.describe(), heap / MIB, metaspace / MIB, codeCache / MIB, direct / MIB, OTHER_NATIVE / MIB, total / MIB, limit / MIB)
                    .isLessThan(limit);
            // An OutOfMemoryError leaves a JVM that answers nothing; exiting lets the kubelet start a fresh one.
            assertThat(flags).as(running.describe()).contains("-XX:+ExitOnOutOfMemoryError");
            // glibc's default of 8 arenas per core grows native memory past any headroom on a large node.
            assertThat(env).as(running.describe()).containsKey("MALLOC_ARENA_MAX");
        }
    }

    @ParameterizedTest
    @MethodSource("installs")
    void probesAllowForTheMeasuredAnswerTimeAndFollowTls(Path folder) {
        for (var running : extenders(folder)) {
            var container = running.container();
            boolean https = container.getArgs().stream().anyMatch(arg -> arg.startsWith("--tls-cert"));
            for (Probe probe : new Probe[] {container.getReadinessProbe(), container.getLivenessProbe()}) {
                assertThat(probe).as(running.describe()).isNotNull();
                assertThat(probe.getTimeoutSeconds()).as(running.describe() + " probe timeoutSeconds")
                        .isNotNull().isGreaterThan(MEASURED_PROBE_SECONDS);
                // kubelet's probe does not follow a plain-HTTP probe to a TLS port: it would fail every time.
                assertThat(probe.getHttpGet().getScheme()).as(running.describe() + " probe scheme")
                        .isEqualTo(https ? "HTTPS" : null);
            }
        }
    }

    private static List<Rendering.Running> extenders(Path folder) {
        var running = Kubectl.kustomize(folder).running(ImageSetting.of(Program.SCHEDULER_EXTENDER).repository());
        assertThat(running).as(folder + " runs the extender").isNotEmpty();
        return running;
    }

    private static Map<String, String> env(List<EnvVar> vars) {
        var env = new HashMap<String, String>();
        for (var variable : vars) {
            if (variable.getValue() != null) {
                env.put(variable.getName(), variable.getValue());
            }
        }
        return env;
    }

    private static Optional<String> option(List<String> flags, String prefix) {
        return flags.stream().filter(flag -> flag.startsWith(prefix)).reduce((first, last) -> last).map(flag -> flag.substring(prefix.length()));
    }

    private static long required(List<String> flags, String prefix, Rendering.Running running) {
        return option(flags, prefix).map(ExtenderMemoryAndProbesTest::bytes)
                .orElseThrow(() -> new AssertionError(running.describe() + ": no " + prefix + " in JAVA_TOOL_OPTIONS " + flags
                        + "; without a cap the pool can grow into the headroom"));
    }

    /** A JVM size: 128m, 1g, 65536k or plain bytes. */
    static long bytes(String size) {
        var lower = size.toLowerCase(java.util.Locale.ROOT);
        long unit = switch (lower.charAt(lower.length() - 1)) {
            case 'k' -> 1024;
            case 'm' -> MIB;
            case 'g' -> 1024 * MIB;
            default -> 1;
        };
        return Long.parseLong(unit == 1 ? lower : lower.substring(0, lower.length() - 1)) * unit;
    }
}
