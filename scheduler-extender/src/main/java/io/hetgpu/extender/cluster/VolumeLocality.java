package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.hetgpu.extender.model.DataLocality;
import io.hetgpu.extender.model.DataLocalityParser;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import java.util.HashSet;
import java.util.Set;

/**
 * Where a claim's data lives: the {@code hetgpu.io/data-locality} annotation on the PVC, else on the PV,
 * else the PV's required node affinity (hostname, rack and zone terms with operator In).
 */
public final class VolumeLocality {

    static final String HOSTNAME = "kubernetes.io/hostname";
    private static final Set<String> ZONE_KEYS = Set.of(HetgpuKeys.LABEL_ZONE, "failure-domain.beta.kubernetes.io/zone");

    private VolumeLocality() {
    }

    /** The locality, or an empty one when nothing says where the data is. Throws on a bad annotation. */
    public static DataLocality of(PersistentVolumeClaim claim, PersistentVolume volume, String rackLabel) {
        var fromClaim = annotation(claim == null ? null : claim.getMetadata().getAnnotations());
        if (fromClaim != null) {
            return DataLocalityParser.parse(fromClaim);
        }
        if (volume == null) {
            return new DataLocality(Set.of(), Set.of(), Set.of());
        }
        var fromVolume = annotation(volume.getMetadata().getAnnotations());
        if (fromVolume != null) {
            return DataLocalityParser.parse(fromVolume);
        }
        Set<String> nodes = new HashSet<>();
        Set<String> racks = new HashSet<>();
        Set<String> zones = new HashSet<>();
        var affinity = volume.getSpec() == null ? null : volume.getSpec().getNodeAffinity();
        if (affinity != null && affinity.getRequired() != null && affinity.getRequired().getNodeSelectorTerms() != null) {
            for (var term : affinity.getRequired().getNodeSelectorTerms()) {
                if (term.getMatchExpressions() == null) {
                    continue;
                }
                for (var expression : term.getMatchExpressions()) {
                    if (!"In".equals(expression.getOperator()) || expression.getValues() == null) {
                        continue;
                    }
                    if (HOSTNAME.equals(expression.getKey())) {
                        nodes.addAll(expression.getValues());
                    } else if (rackLabel.equals(expression.getKey())) {
                        racks.addAll(expression.getValues());
                    } else if (ZONE_KEYS.contains(expression.getKey())) {
                        zones.addAll(expression.getValues());
                    }
                }
            }
        }
        return new DataLocality(nodes, racks, zones);
    }

    private static String annotation(java.util.Map<String, String> annotations) {
        return annotations == null ? null : annotations.get(HetgpuKeys.DATA_LOCALITY);
    }
}
