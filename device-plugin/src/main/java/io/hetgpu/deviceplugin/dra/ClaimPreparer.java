package io.hetgpu.deviceplugin.dra;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.deviceplugin.kubelet.FailureCause;
import io.hetgpu.gpu.Quote;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NodePrepareResources and NodeUnprepareResources without gRPC: each claim read from the API server, its GPUs on this
 * node found, a CDI spec written for it and the result checkpointed; unpreparing removes both. Every claim is answered
 * in its own entry: one that cannot be prepared gets its reason there, and the call as a whole never fails. Preparing
 * a claim prepared before answers what it answered then. The API read happens outside the lock, so one slow read does
 * not hold back the other claims' answers; the files and the checkpoint change under it.
 */
public final class ClaimPreparer {

    private static final Logger log = LoggerFactory.getLogger(ClaimPreparer.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Reads a claim from the API server; null when it does not exist, an exception when the API server cannot tell. */
    @FunctionalInterface
    public interface ClaimReader {
        ResourceClaim read(String namespace, String name);
    }

    /**
     * @param driver       this driver's name
     * @param pool         this node's pool
     * @param cdiDir       where CDI specs are written
     * @param maxClaims    claims answered in one call; those beyond are answered with an error, and kubelet asks again
     */
    public record Settings(String driver, String pool, Path cdiDir, int maxClaims) {
        public Settings {
            if (maxClaims < 1) {
                throw new IllegalArgumentException("maxClaims must be at least 1, got " + maxClaims);
            }
        }
    }

    private final Settings settings;
    private final GpuInventory inventory;
    private final ClaimReader reader;
    private final Checkpoint checkpoint; // guarded by this
    private final DraMetrics metrics;

    public ClaimPreparer(Settings settings, GpuInventory inventory, ClaimReader reader, Checkpoint checkpoint, DraMetrics metrics) {
        this.settings = settings;
        this.inventory = inventory;
        this.reader = reader;
        this.checkpoint = checkpoint;
        this.metrics = metrics;
    }

    /** Every claim's answer by UID, in the request's order; a UID asked twice is answered once. */
    public Map<String, ClaimResult> prepare(List<ClaimRef> claims) {
        var answers = new LinkedHashMap<String, ClaimResult>();
        for (int i = 0; i < claims.size(); i++) {
            var claim = claims.get(i);
            if (answers.containsKey(claim.uid())) {
                continue;
            }
            ClaimResult result = i < settings.maxClaims() ? prepare(claim)
                    : new ClaimResult.Failed("more than " + settings.maxClaims() + " claims in one call; asked again, it is prepared");
            if (result instanceof ClaimResult.Failed failed) {
                metrics.prepareFailed();
                log.warn("Cannot prepare claim {}: {}", claim, failed.reason());
            }
            answers.put(claim.uid(), result);
        }
        return answers;
    }

    /** Every claim's error by UID ({@code ""} when unprepared, or never prepared here). */
    public Map<String, String> unprepare(List<ClaimRef> claims) {
        var answers = new LinkedHashMap<String, String>();
        for (int i = 0; i < claims.size(); i++) {
            var claim = claims.get(i);
            if (answers.containsKey(claim.uid())) {
                continue;
            }
            var error = i < settings.maxClaims() ? unprepare(claim)
                    : "more than " + settings.maxClaims() + " claims in one call; asked again, it is unprepared";
            if (!error.isEmpty()) {
                log.warn("Cannot unprepare claim {}: {}", claim, error);
            }
            answers.put(claim.uid(), error);
        }
        return answers;
    }

    /** The claims prepared now. */
    public synchronized int prepared() {
        return checkpoint.size();
    }

    private ClaimResult prepare(ClaimRef asked) {
        var problem = asked.problem();
        if (problem.isPresent()) {
            return new ClaimResult.Failed(problem.get());
        }
        var done = preparedBefore(asked);
        if (done.isPresent()) {
            return done.get();
        }
        ResourceClaim claim;
        try {
            claim = reader.read(asked.namespace(), asked.name());
        } catch (RuntimeException e) {
            return new ClaimResult.Failed("reading claim " + asked + " from the API server failed: " + Quote.cut(FailureCause.of(e), 200));
        }
        return switch (AllocatedDevices.read(claim, asked, settings.driver(), settings.pool(), inventory.topology())) {
            case AllocatedDevices.Outcome.Refused refused -> new ClaimResult.Failed(refused.reason());
            case AllocatedDevices.Outcome.Gpus gpus -> write(asked, gpus.gpus());
        };
    }

    /** The answer given before for this UID, if it was prepared; a UID that names another claim now is refused. */
    private synchronized Optional<ClaimResult> preparedBefore(ClaimRef asked) {
        return checkpoint.get(asked.uid()).map(prepared -> prepared.claim().equals(asked)
                ? new ClaimResult.Prepared(prepared.devices())
                : new ClaimResult.Failed("claim uid " + Quote.of(asked.uid()) + " was prepared for " + prepared.claim()
                        + ", kubelet now names it " + asked));
    }

    private synchronized ClaimResult write(ClaimRef asked, List<AllocatedDevices.AllocatedGpu> gpus) {
        var before = preparedBefore(asked); // a concurrent call for the same claim got here first
        if (before.isPresent()) {
            return before.get();
        }
        if (checkpoint.full()) {
            return new ClaimResult.Failed("this node holds " + checkpoint.size() + " prepared claims, the most it keeps");
        }
        var devices = new ArrayList<PreparedDevice>();
        var specGpus = new ArrayList<CdiSpec.Gpu>();
        var topology = inventory.topology();
        for (var gpu : gpus) {
            devices.add(new PreparedDevice(gpu.requestNames(), settings.pool(), gpu.deviceName(),
                    List.of(CdiSpec.deviceId(settings.driver(), asked.uid(), gpu.deviceName()))));
            specGpus.add(new CdiSpec.Gpu(gpu.deviceName(), topology.device(gpu.position()).index(), gpu.uuid()));
        }
        var spec = settings.cdiDir().resolve(CdiSpec.fileName(settings.driver(), asked.uid()));
        try {
            if (!gpus.isEmpty()) {
                AtomicFiles.write(spec, JSON.writerWithDefaultPrettyPrinter()
                        .writeValueAsBytes(CdiSpec.content(settings.driver(), asked.uid(), specGpus)));
            }
            checkpoint.put(new PreparedClaim(asked, devices));
        } catch (IOException e) {
            deleteQuietly(spec);
            return new ClaimResult.Failed("cannot write claim " + asked + "'s CDI spec or checkpoint: " + Quote.cut(FailureCause.of(e), 200));
        }
        metrics.prepared();
        log.info("Prepared claim {}: {}", asked, gpus.stream().map(gpu -> gpu.deviceName() + " (" + gpu.uuid() + ")").toList());
        return new ClaimResult.Prepared(devices);
    }

    private synchronized String unprepare(ClaimRef asked) {
        // The UID alone names the files: a claim whose namespace or name kubelet has wrong is unprepared all the same.
        var problem = asked.uidProblem();
        if (problem.isPresent()) {
            return problem.get();
        }
        try {
            Files.deleteIfExists(settings.cdiDir().resolve(CdiSpec.fileName(settings.driver(), asked.uid())));
            boolean held = checkpoint.get(asked.uid()).isPresent();
            checkpoint.remove(asked.uid());
            if (held) {
                metrics.unprepared();
                log.info("Unprepared claim {}", asked);
            }
            return "";
        } catch (IOException e) {
            return "cannot remove claim " + asked + "'s CDI spec or checkpoint entry: " + Quote.cut(FailureCause.of(e), 200);
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            log.warn("Cannot remove {}: {}", file, FailureCause.of(e));
        }
    }
}
