package io.hetgpu.testcluster.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Who may reach hetgpu's pods and what the device plugin's token may change, as the install renders
 * them: each NetworkPolicy selects pods the install runs and opens only ports those pods declare; the
 * extender's metrics port, like the plugin's, is open to the scraper only; the admission policy is bound and names the
 * device plugin's own service account.
 */
class NetworkAccessTest {

    private final Rendering install = Kubectl.kustomize(ManifestTree.ROOT);

    @Test
    void everyPolicySelectsPodsOfTheInstallAndOpensOnlyTheirDeclaredPorts() {
        var policies = install.all(NetworkPolicy.class);
        assertThat(policies).extracting(p -> p.getMetadata().getName())
                .containsExactlyInAnyOrder("hetgpu-scheduler", "hetgpu-device-plugin");
        for (var policy : policies) {
            var selected = install.workloads().stream()
                    .filter(w -> selects(policy.getSpec().getPodSelector(), w.template().getMetadata().getLabels()))
                    .toList();
            assertThat(selected).as(policy.getMetadata().getName() + " selects a workload").isNotEmpty();
            assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Ingress");
            var declared = selected.stream().flatMap(w -> w.template().getSpec().getContainers().stream())
                    .flatMap(c -> c.getPorts().stream()).map(ContainerPort::getName).toList();
            for (var rule : policy.getSpec().getIngress()) {
                assertThat(rule.getFrom()).as("a rule open to everyone").isNotEmpty();
                for (var port : rule.getPorts()) {
                    assertThat(port.getPort().getStrVal()).as(policy.getMetadata().getName() + " opens a named port its pods declare")
                            .isIn(declared);
                }
            }
        }
    }

    /** The extender's verbs listen on its pod's loopback address; what the network may reach is metrics, from the scraper. */
    @Test
    void theSchedulersPodsAndThePluginAreOpenToTheScraperOnly() {
        for (var name : List.of("hetgpu-scheduler", "hetgpu-device-plugin")) {
            var rules = install.one(NetworkPolicy.class, name).getSpec().getIngress();
            assertThat(rules).as(name).isNotEmpty().allSatisfy(rule -> {
                assertThat(rule.getFrom()).allSatisfy(peer -> assertThat(scraper(peer.getNamespaceSelector())).isTrue());
                assertThat(rule.getPorts()).allSatisfy(port -> assertThat(port.getPort().getStrVal()).isIn("metrics", "http"));
            });
        }
        assertThat(install.one(NetworkPolicy.class, "hetgpu-scheduler").getSpec().getIngress())
                .flatExtracting(rule -> rule.getPorts()).extracting(port -> port.getPort().getStrVal()).containsExactly("metrics");
    }

    @Test
    void theAdmissionPolicyIsBoundAndNamesTheDevicePluginsServiceAccount() {
        var policy = install.one(ValidatingAdmissionPolicy.class, "hetgpu-device-plugin-own-node");
        var binding = install.one(ValidatingAdmissionPolicyBinding.class, "hetgpu-device-plugin-own-node");
        assertThat(binding.getSpec().getPolicyName()).isEqualTo(policy.getMetadata().getName());
        assertThat(binding.getSpec().getValidationActions()).containsExactly("Deny");
        assertThat(policy.getSpec().getFailurePolicy()).isEqualTo("Fail");

        var plugin = install.one(DaemonSet.class, "hetgpu-device-plugin");
        var account = "system:serviceaccount:" + plugin.getMetadata().getNamespace() + ":"
                + plugin.getSpec().getTemplate().getSpec().getServiceAccountName();
        assertThat(policy.getSpec().getMatchConditions()).singleElement()
                .satisfies(condition -> assertThat(condition.getExpression()).isEqualTo("request.userInfo.username == \"" + account + "\""));
        // What the plugin's ClusterRole allows on Nodes is what the policy then narrows.
        assertThat(policy.getSpec().getMatchConstraints().getResourceRules()).singleElement().satisfies(rule -> {
            assertThat(rule.getResources()).contains("nodes");
            assertThat(rule.getOperations()).containsExactly("UPDATE");
        });
        assertThat(policy.getSpec().getValidations()).extracting(v -> v.getExpression())
                .anySatisfy(e -> assertThat(e).contains("object.metadata.name == variables.podNode"))
                .anySatisfy(e -> assertThat(e).contains("object.metadata.labels.all(k, k.startsWith('hetgpu.io/')"))
                .anySatisfy(e -> assertThat(e).contains("object.metadata.annotations.all(k, k.startsWith('hetgpu.io/')"));
    }

    private static boolean scraper(LabelSelector namespaces) {
        return namespaces != null && Map.of("hetgpu.io/metrics-scraper", "true").equals(namespaces.getMatchLabels());
    }

    private static boolean selects(LabelSelector selector, Map<String, String> labels) {
        if (selector == null || labels == null) {
            return false;
        }
        var expressions = selector.getMatchExpressions() == null ? List.of() : selector.getMatchExpressions();
        assertThat(expressions).as("the tests read matchLabels only").isEmpty();
        return selector.getMatchLabels() != null && labels.entrySet().containsAll(selector.getMatchLabels().entrySet());
    }
}
