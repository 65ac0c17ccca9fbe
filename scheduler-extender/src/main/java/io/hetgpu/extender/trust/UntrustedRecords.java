package io.hetgpu.extender.trust;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The records refused, said once per pod: a WARN line with the pod and why, and a count per reason. A pod's record is
 * read again at every change of the pod; only the first refusal of each pod (and reason) is logged and counted, among
 * the last {@code memory} pods refused, so that a flood of pods costs a bounded memory, not one entry per pod.
 */
public final class UntrustedRecords {

    private static final Logger LOG = LoggerFactory.getLogger(UntrustedRecords.class);
    /** The pods remembered by default: far more than refusals expected between two changes of one pod. */
    public static final int DEFAULT_MEMORY = 10_000;

    private final Map<Distrust, LongAdder> counts = new EnumMap<>(Distrust.class);
    private final LinkedHashMap<String, Distrust> said;
    private final boolean logged;

    /** Logging each refusal at WARN: the extender's. */
    public UntrustedRecords(int memory) {
        this(memory, true);
    }

    /**
     * Counted only: for a tool that reads a cluster without its key (every record there is another key's, and a line
     * per pod would say nothing).
     */
    public static UntrustedRecords countedOnly(int memory) {
        return new UntrustedRecords(memory, false);
    }

    private UntrustedRecords(int memory, boolean logged) {
        this.logged = logged;
        if (memory < 1) {
            throw new IllegalArgumentException("memory must be at least 1, got " + memory);
        }
        for (var reason : Distrust.values()) {
            counts.put(reason, new LongAdder());
        }
        this.said = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Distrust> eldest) {
                return size() > memory;
            }
        };
    }

    /** Notes the refusal of pod {@code namespace/name}'s record; logs and counts it unless this pod's was already, for this reason. */
    public void refused(String uid, String namespace, String name, Distrust reason, String why) {
        synchronized (said) {
            if (said.put(uid, reason) == reason) {
                return;
            }
        }
        counts.get(reason).increment();
        if (!logged) {
            return;
        }
        LOG.warn("pod {}/{}: hetgpu.io/gpu-devices not trusted ({}): {}; it holds no GPUs by its record", namespace, name,
                reason.tag(), why);
    }

    /** How many pods' records were refused for {@code reason}. */
    public long count(Distrust reason) {
        return counts.get(reason).sum();
    }
}
