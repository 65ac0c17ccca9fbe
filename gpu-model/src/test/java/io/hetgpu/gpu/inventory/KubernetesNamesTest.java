package io.hetgpu.gpu.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class KubernetesNamesTest {

    @Test
    void labelKeysWithAndWithoutAPrefix() {
        assertThat(KubernetesNames.labelKeyProblem("topology.hetgpu.io/rack")).isEmpty();
        assertThat(KubernetesNames.labelKeyProblem("topology.kubernetes.io/zone")).isEmpty();
        assertThat(KubernetesNames.labelKeyProblem("rack")).isEmpty();
        assertThat(KubernetesNames.labelKeyProblem("Rack_1.a")).isEmpty();
        assertThat(KubernetesNames.labelKeyProblem("a".repeat(253) + "/" + "b".repeat(63))).isEmpty();
    }

    @Test
    void badLabelKeysSayWhichPartIsWrong() {
        assertThat(KubernetesNames.labelKeyProblem("")).hasValueSatisfying(p -> assertThat(p).contains("empty"));
        assertThat(KubernetesNames.labelKeyProblem("Topology.hetgpu.io/rack")).hasValueSatisfying(p -> assertThat(p)
                .contains("the part before '/' must be a DNS subdomain").endsWith("got \"Topology.hetgpu.io/rack\""));
        assertThat(KubernetesNames.labelKeyProblem("topology.hetgpu.io/")).hasValueSatisfying(p -> assertThat(p).contains("the name after '/'"));
        assertThat(KubernetesNames.labelKeyProblem("/rack")).hasValueSatisfying(p -> assertThat(p).contains("DNS subdomain"));
        assertThat(KubernetesNames.labelKeyProblem("rack-")).hasValueSatisfying(p -> assertThat(p).contains("ending with a letter or digit"));
        assertThat(KubernetesNames.labelKeyProblem("a/b/c")).isPresent();
        assertThat(KubernetesNames.labelKeyProblem("x/" + "b".repeat(64))).isPresent();
        assertThat(KubernetesNames.labelKeyProblem("a".repeat(254) + "/rack")).isPresent();
        assertThat(KubernetesNames.labelKeyProblem("rack label")).isPresent();
    }

    @Test
    void extendedResourceNamesNeedADomainOutsideKubernetes() {
        assertThat(KubernetesNames.resourceNameProblem("nvidia.com/gpu")).isEmpty();
        assertThat(KubernetesNames.resourceNameProblem("example.com/GPU_v2")).isEmpty();
        assertThat(KubernetesNames.resourceNameProblem("gpu")).hasValueSatisfying(p -> assertThat(p).contains("a domain, '/', a name"));
        assertThat(KubernetesNames.resourceNameProblem("kubernetes.io/gpu")).hasValueSatisfying(p -> assertThat(p).contains("outside kubernetes.io"));
        assertThat(KubernetesNames.resourceNameProblem("NVIDIA.com/gpu")).isPresent();
        assertThat(KubernetesNames.resourceNameProblem("nvidia.com/")).isPresent();
        assertThat(KubernetesNames.resourceNameProblem(null)).isPresent();
    }
}
