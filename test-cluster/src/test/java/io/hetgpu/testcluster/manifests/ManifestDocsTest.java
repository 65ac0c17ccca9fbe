package io.hetgpu.testcluster.manifests;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.hetgpu.deviceplugin.node.NodeLabels;
import io.hetgpu.gpu.inventory.HetgpuKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** docs/install.md, manifests/README.md and README.md say what the manifests and kubectl really do. */
class ManifestDocsTest {

    private static final Path MANIFESTS_README = ManifestTree.ROOT.resolve("README.md");
    private static final Path README = Path.of("..", "README.md");
    /** The admin's page: installing, checking, upgrading and uninstalling. */
    private static final Path INSTALL = Path.of("..", "docs", "install.md");
    private static final Pattern KUSTOMIZATION_COMMAND = Pattern.compile("kubectl (?:(?:apply|delete|diff) -k|kustomize) ([^\\s`)]+)");
    private static final Pattern NODE_KEY_COMMAND = Pattern.compile("(?m)^kubectl (label|annotate) nodes --all (.+)$");
    /** What hetgpu writes on a Node or asks the admin to set there. */
    private static final List<String> HETGPU_NODE_PREFIXES = List.of(HetgpuKeys.PREFIX, "topology.hetgpu.io/");

    @Test
    void theUninstallSectionNamesEveryKeyOfHetgpusContract() throws Exception {
        String uninstall = section(Files.readString(INSTALL), "## Uninstall");
        var missing = new ArrayList<String>();
        for (String key : contractKeys()) {
            if (!uninstall.contains("`" + key + "`")) {
                missing.add(key);
            }
        }
        assertThat(missing).as("HetgpuKeys not named in docs/install.md, Uninstall").isEmpty();
    }

    /**
     * The section's {@code kubectl label/annotate nodes --all} commands, run by the real kubectl on a
     * Node carrying every key hetgpu writes or has the admin set (with {@code --local} instead of a
     * cluster), leave no hetgpu key and nothing else touched.
     */
    @Test
    void theUninstallCommandsRemoveEveryHetgpuKeyFromANode(@TempDir Path dir) throws IOException {
        var labels = new LinkedHashMap<String, String>();
        NodeLabels.OWNED.forEach(key -> labels.put(key, "x"));
        labels.put(ExpectedDeployment.GPU_NODE_LABEL, "true");
        labels.put(ExpectedDeployment.SIMULATED_PROFILE_LABEL, "dgx-a100");
        labels.put(HetgpuKeys.LABEL_RACK, "rack-a");
        labels.put(HetgpuKeys.LABEL_ZONE, "zone-1");
        labels.put("kubernetes.io/hostname", "gpu-7");
        var annotations = Map.of(HetgpuKeys.ANNOTATION_INVENTORY, "{}", HetgpuKeys.ANNOTATION_FREE, "[]",
                "node.alpha.kubernetes.io/ttl", "0");
        var node = new NodeBuilder().withNewMetadata().withName("gpu-7").withLabels(labels).withAnnotations(annotations).endMetadata().build();
        Path file = dir.resolve("node.json");
        Files.writeString(file, new KubernetesSerialization().asJson(node));

        var commands = NODE_KEY_COMMAND.matcher(section(Files.readString(INSTALL), "## Uninstall")).results().toList();
        assertThat(commands).as("kubectl label/annotate nodes --all commands in Uninstall").hasSizeGreaterThanOrEqualTo(2);
        for (var command : commands) {
            var args = new ArrayList<>(List.of(command.group(1), "--local", "-f", file.toString(), "-o", "json"));
            args.addAll(Arrays.asList(command.group(2).trim().split("\\s+")));
            Files.writeString(file, Kubectl.output(args));
        }

        JsonNode metadata = ManifestTree.yaml(Files.readString(file)).path("metadata");
        var left = new ArrayList<String>();
        metadata.path("labels").fieldNames().forEachRemaining(left::add);
        metadata.path("annotations").fieldNames().forEachRemaining(left::add);
        assertThat(left).noneMatch(key -> HETGPU_NODE_PREFIXES.stream().anyMatch(key::startsWith))
                .contains(HetgpuKeys.LABEL_ZONE, "kubernetes.io/hostname", "node.alpha.kubernetes.io/ttl");
    }

    @Test
    void everyKustomizationTheDocsNameExists() throws IOException {
        var named = new ArrayList<String>();
        for (Path doc : List.of(README, MANIFESTS_README, INSTALL)) {
            KUSTOMIZATION_COMMAND.matcher(Files.readString(doc)).results().map(m -> m.group(1)).forEach(named::add);
        }
        assertThat(named).isNotEmpty().allSatisfy(folder ->
                assertThat(Path.of("..").resolve(folder).resolve(ManifestTree.KUSTOMIZATION)).as(folder).isRegularFile());
    }

    /** The install page names both installs, and the Uninstall section how to delete each. */
    @Test
    void theInstallPageNamesBothInstallsAndHowToDeleteThem() throws IOException {
        String page = Files.readString(INSTALL);
        var applied = KUSTOMIZATION_COMMAND.matcher(page).results().map(m -> m.group(1)).toList();
        assertThat(applied).contains("manifests/", "manifests/overlays/simulated/", "manifests/monitoring/", "manifests/samples/");
        assertThat(section(page, "## Uninstall")).contains("kubectl delete -k manifests/ ", "kubectl delete -k manifests/overlays/simulated/");
    }

    /** Every label and annotation name of HetgpuKeys (its prefix and the resource name are not keys). */
    private static List<String> contractKeys() throws IllegalAccessException {
        var keys = new ArrayList<String>();
        for (Field field : HetgpuKeys.class.getFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == String.class
                    && !field.getName().equals("PREFIX") && !field.getName().equals("DEFAULT_RESOURCE_NAME")) {
                keys.add((String) field.get(null));
            }
        }
        assertThat(keys).hasSizeGreaterThan(20);
        return keys;
    }

    /** From {@code heading} to the next heading of the same level. */
    private static String section(String markdown, String heading) {
        int start = markdown.indexOf("\n" + heading + "\n");
        assertThat(start).as("heading " + heading).isNotNegative();
        String level = heading.substring(0, heading.indexOf(' ') + 1);
        int end = markdown.indexOf("\n" + level, start + heading.length() + 1);
        return end < 0 ? markdown.substring(start) : markdown.substring(start, end);
    }
}
