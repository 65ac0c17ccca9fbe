package io.hetgpu.testcluster.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.inventory.HetgpuKeys;
import io.hetgpu.gpu.inventory.NvidiaKeys;
import io.hetgpu.testcluster.cluster.ProjectFiles;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** docs/reference.md, the page a pod author reads, names every key of the contract and every value the parsers accept. */
class ReferencePageTest {

    @Test
    void everyKeyOfTheContractIsOnThePage() throws Exception {
        var page = Files.readString(ProjectFiles.manifests().getParent().resolve("docs/reference.md"));
        var keys = new java.util.ArrayList<String>();
        keys.addAll(keys(HetgpuKeys.class));
        keys.addAll(keys(NvidiaKeys.class));
        assertThat(keys).as("the contract's keys").hasSizeGreaterThan(25);
        assertThat(keys).allSatisfy(key -> assertThat(page).as("docs/reference.md names %s", key).contains("`" + key + "`"));
        assertThat(page).contains("schedulerName: hetgpu-scheduler", "training-high", "training-low");
    }

    /** The string constants of a keys class: every label and annotation name it defines (the prefix alone is not a key). */
    private static List<String> keys(Class<?> type) {
        return Arrays.stream(type.getDeclaredFields())
                .filter(f -> Modifier.isStatic(f.getModifiers()) && f.getType() == String.class && !f.getName().equals("PREFIX"))
                .map(ReferencePageTest::value)
                .toList();
    }

    private static String value(Field field) {
        try {
            return (String) field.get(null);
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);
        }
    }
}
