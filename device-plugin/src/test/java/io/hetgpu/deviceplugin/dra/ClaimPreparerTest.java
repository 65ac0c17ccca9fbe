package io.hetgpu.deviceplugin.dra;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.hetgpu.deviceplugin.devices.GpuInventory;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.inventory.HetgpuDra;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/** The bounds and the checkpoint's failure modes, without sockets or an API server. */
class ClaimPreparerTest {

    private static final String NODE = "gpu-node-1";

    @TempDir
    Path temp;

    private final Map<String, ResourceClaim> claims = new HashMap<>();
    private final AtomicInteger reads = new AtomicInteger();

    @Test
    void answersEveryClaimOfACallButPreparesOnlyAsManyAsConfigured() throws Exception {
        var preparer = preparer(2);
        var asked = new ArrayList<ClaimRef>();
        for (int i = 0; i < 4; i++) {
            asked.add(allocated("c" + i, "gpu-" + i));
        }
        asked.add(asked.get(0)); // kubelet naming one claim twice gets one answer

        var answers = preparer.prepare(asked);

        assertThat(answers).hasSize(4);
        assertThat(answers.get("uid-c0")).isInstanceOf(ClaimResult.Prepared.class);
        assertThat(answers.get("uid-c1")).isInstanceOf(ClaimResult.Prepared.class);
        assertThat(answers.get("uid-c2")).isEqualTo(new ClaimResult.Failed("more than 2 claims in one call; asked again, it is prepared"));
        assertThat(reads).as("claims beyond the bound are not read").hasValue(2);
        assertThat(preparer.prepare(asked.subList(2, 4)).values()).allMatch(ClaimResult.Prepared.class::isInstance);
        assertThat(reads).hasValue(4);
    }

    @Test
    void anUnreadableCheckpointIsSetAsideAndUnprepareStillRemovesTheSpecByUid() throws Exception {
        var preparer = preparer(8);
        var claim = allocated("train", "gpu-4");
        assertThat(preparer.prepare(java.util.List.of(claim)).get("uid-train")).isInstanceOf(ClaimResult.Prepared.class);
        var spec = temp.resolve("cdi").resolve(CdiSpec.fileName(HetgpuDra.DRIVER, "uid-train"));
        assertThat(spec).exists();
        Files.writeString(temp.resolve("plugin").resolve(Checkpoint.FILE_NAME), "{\"version\": 1, \"claims\": [");

        var restarted = preparer(8);

        assertThat(restarted.prepared()).isZero();
        assertThat(temp.resolve("plugin").resolve("checkpoint.json.unreadable")).exists();
        assertThat(restarted.unprepare(java.util.List.of(claim))).containsEntry("uid-train", "");
        assertThat(spec).doesNotExist();
    }

    private ClaimPreparer preparer(int maxClaims) throws Exception {
        var plugin = Files.createDirectories(temp.resolve("plugin"));
        var cdi = Files.createDirectories(temp.resolve("cdi"));
        return new ClaimPreparer(new ClaimPreparer.Settings(HetgpuDra.DRIVER, NODE, cdi, maxClaims),
                new GpuInventory(Fixtures.dgx1V100()), (namespace, name) -> {
                    reads.incrementAndGet();
                    return claims.get(namespace + "/" + name);
                }, Checkpoint.open(plugin, 16), DraMetrics.unscraped());
    }

    private ClaimRef allocated(String name, String device) {
        claims.put("default/" + name, new ResourceClaimBuilder().withNewMetadata().withName(name).withNamespace("default")
                .withUid("uid-" + name).endMetadata().withNewStatus().withNewAllocation().withNewDevices()
                .withResults(new DeviceRequestAllocationResultBuilder().withDriver(HetgpuDra.DRIVER).withPool(NODE).withDevice(device)
                        .withRequest("gpu").build())
                .endDevices().endAllocation().endStatus().build());
        return new ClaimRef("default", name, "uid-" + name);
    }
}
