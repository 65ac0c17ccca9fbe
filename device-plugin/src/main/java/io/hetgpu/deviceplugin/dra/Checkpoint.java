package io.hetgpu.deviceplugin.dra;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hetgpu.gpu.Quote;
import io.hetgpu.deviceplugin.kubelet.FailureCause;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The claims this plugin has prepared, by UID, on disk in the plugin's folder: written whole after every change
 * ({@link AtomicFiles}), read at start, so that a restarted plugin answers kubelet's prepare and unprepare for claims
 * prepared before. Not thread-safe: its one user ({@link ClaimPreparer}) serialises changes.
 */
public final class Checkpoint {

    private static final Logger log = LoggerFactory.getLogger(Checkpoint.class);

    static final String FILE_NAME = "checkpoint.json";
    static final int VERSION = 1;
    /** Far more than {@code maxClaims} entries take; a larger file is not ours, or damaged, and is not read. */
    static final long MAX_BYTES = 8L * 1024 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path file;
    private final int maxClaims;
    private final LinkedHashMap<String, PreparedClaim> claims;

    private Checkpoint(Path file, int maxClaims, LinkedHashMap<String, PreparedClaim> claims) {
        this.file = file;
        this.maxClaims = maxClaims;
        this.claims = claims;
    }

    /**
     * The checkpoint in {@code folder}, empty when there is none yet. One that cannot be read is set aside (renamed
     * {@code checkpoint.json.unreadable}) and the plugin starts with none: claims prepared before are then prepared
     * again from the API server, and unprepared by their UID alone, so nothing is lost but the log line.
     */
    public static Checkpoint open(Path folder, int maxClaims) throws IOException {
        var file = folder.resolve(FILE_NAME);
        try {
            if (Files.size(file) > MAX_BYTES) {
                throw new IOException("larger than " + MAX_BYTES + " bytes");
            }
            return new Checkpoint(file, maxClaims, parse(Files.readAllBytes(file), maxClaims));
        } catch (NoSuchFileException e) {
            return new Checkpoint(file, maxClaims, new LinkedHashMap<>());
        } catch (IOException | RuntimeException e) {
            var aside = file.resolveSibling(FILE_NAME + ".unreadable");
            log.warn("Checkpoint {} cannot be read ({}): set aside as {}; claims prepared before are prepared again when"
                    + " kubelet asks", file, FailureCause.of(e), aside.getFileName());
            Files.move(file, aside, StandardCopyOption.REPLACE_EXISTING);
            return new Checkpoint(file, maxClaims, new LinkedHashMap<>());
        }
    }

    public Optional<PreparedClaim> get(String uid) {
        return Optional.ofNullable(claims.get(uid));
    }

    public int size() {
        return claims.size();
    }

    public boolean full() {
        return claims.size() >= maxClaims;
    }

    /** Adds or replaces the claim's entry, on disk before this returns; on a failure nothing changed. */
    public void put(PreparedClaim claim) throws IOException {
        var before = claims.put(claim.claim().uid(), claim);
        try {
            save();
        } catch (IOException e) {
            if (before == null) {
                claims.remove(claim.claim().uid());
            } else {
                claims.put(claim.claim().uid(), before);
            }
            throw e;
        }
    }

    /** Removes the claim's entry, on disk before this returns; a claim not held is no change. */
    public void remove(String uid) throws IOException {
        var before = claims.remove(uid);
        if (before == null) {
            return;
        }
        try {
            save();
        } catch (IOException e) {
            claims.put(uid, before);
            throw e;
        }
    }

    private void save() throws IOException {
        var entries = new LinkedHashMap<String, Object>();
        claims.forEach((uid, claim) -> entries.put(uid, Map.of(
                "namespace", claim.claim().namespace(),
                "name", claim.claim().name(),
                "devices", claim.devices().stream().map(device -> Map.of(
                        "requestNames", device.requestNames(),
                        "poolName", device.poolName(),
                        "deviceName", device.deviceName(),
                        "cdiDeviceIds", device.cdiDeviceIds())).toList())));
        AtomicFiles.write(file, JSON.writeValueAsBytes(Map.of("version", VERSION, "claims", entries)));
    }

    private static LinkedHashMap<String, PreparedClaim> parse(byte[] content, int maxClaims) throws IOException {
        var tree = JSON.readTree(content);
        if (tree == null || !tree.path("version").isInt() || tree.path("version").asInt() != VERSION) {
            throw new IOException("version: expected " + VERSION + ", got " + (tree == null ? "nothing" : Quote.of(tree.path("version"))));
        }
        var entries = tree.path("claims");
        if (!entries.isObject() || entries.size() > maxClaims) {
            throw new IOException("claims: expected an object of at most " + maxClaims + " entries");
        }
        var claims = new LinkedHashMap<String, PreparedClaim>();
        var fields = entries.fields();
        while (fields.hasNext()) {
            var entry = fields.next();
            var value = entry.getValue();
            var ref = new ClaimRef(value.path("namespace").asText(), value.path("name").asText(), entry.getKey());
            var problem = ref.problem();
            if (problem.isPresent()) {
                throw new IOException("claims." + Quote.cut(entry.getKey()) + ": " + problem.get());
            }
            var devices = new ArrayList<PreparedDevice>();
            for (var device : value.path("devices")) {
                devices.add(new PreparedDevice(strings(device.path("requestNames")), device.path("poolName").asText(),
                        device.path("deviceName").asText(), strings(device.path("cdiDeviceIds"))));
            }
            claims.put(entry.getKey(), new PreparedClaim(ref, devices));
        }
        return claims;
    }

    private static List<String> strings(com.fasterxml.jackson.databind.JsonNode array) {
        return JSON.convertValue(array.isArray() ? array : JSON.createArrayNode(), new TypeReference<List<String>>() { });
    }
}
