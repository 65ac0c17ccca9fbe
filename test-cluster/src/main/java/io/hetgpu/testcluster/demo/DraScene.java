package io.hetgpu.testcluster.demo;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.hetgpu.gpu.discovery.GpuDiscoveryException;
import io.hetgpu.gpu.inventory.InventoryFormatException;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.kubescheduler.dra.DeviceAttribute;
import io.hetgpu.kubescheduler.dra.HetgpuClaims;
import io.hetgpu.kubescheduler.dra.HetgpuClaims.Priority;
import io.hetgpu.testcluster.cluster.DeployedConfiguration;
import io.hetgpu.testcluster.cluster.NodeSpec;
import io.hetgpu.testcluster.cluster.ResourceClaimController;
import io.hetgpu.testcluster.draplacement.ClaimObjects;
import io.hetgpu.testcluster.draplacement.DraNodes;
import io.hetgpu.testcluster.scheduler.Decision;
import io.hetgpu.testcluster.scheduler.SchedulerDriver;
import java.io.IOException;
import java.net.http.HttpClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The demo's DRA scene: three nodes whose GPUs hetgpu's DRA driver publishes (H100s, a DGX-1 of V100s, T4s) and five
 * pods that claim GPUs (three urgent ones of one GPU, a low-priority one, one of four GPUs), placed by kube-scheduler
 * alone (its DynamicResources plugin, 1.35's scoring included) twice: with plain claims ({@code exactly:
 * {deviceClassName, count}}, first fit) and with hetgpu's claims (the shipped templates: tier bands in the pod's order,
 * one NVLink set preferred for several GPUs). The claims alone steer kube-scheduler: no extender runs in this scene.
 */
final class DraScene {

    static final String H100 = "dgx-h100-1";
    static final String V100 = "dgx1-v100-1";
    static final String T4 = "t4-1";
    private static final String NAMESPACE = "default";

    /** A pod of the scene: its name, priority and GPUs, in the order they are created. */
    record ScenePod(String name, Priority priority, int gpus) {
    }

    /**
     * Three urgent pods first: each asks for a core, so kube-scheduler's default scores spread plain claims over the three
     * nodes whatever the tie-break, and only one gets an H100.
     */
    static final List<ScenePod> PODS = List.of(
            new ScenePod("urgent-1", Priority.HIGH, 1),
            new ScenePod("urgent-2", Priority.HIGH, 1),
            new ScenePod("urgent-3", Priority.HIGH, 1),
            new ScenePod("nightly-sweep", Priority.LOW, 1),
            new ScenePod("allreduce-4", Priority.NORMAL, 4));

    /** Which claims the pods make. */
    enum Claims {
        PLAIN("plain claims"), HETGPU("hetgpu's claims");

        final String title;

        Claims(String title) {
            this.title = title;
        }
    }

    /** Where a pod's claim was allocated: node, devices with their card and tier, and whether they are NVLink-connected. */
    record Placed(ScenePod pod, String node, List<String> devices, List<String> cards, boolean nvlinkConnected) {
    }

    record Outcome(Claims claims, List<Placed> placed, Map<String, String> pending) {
    }

    private DraScene() {
    }

    static List<NodeSpec> nodes() {
        return List.of(NodeSpec.dra(H100, "rack-a", "zone-1", "dgx-h100", NodeSpec.DraDriver.HETGPU),
                NodeSpec.dra(V100, "rack-b", "zone-1", "dgx1-v100", NodeSpec.DraDriver.HETGPU),
                NodeSpec.dra(T4, "rack-b", "zone-1", "t4-4x", NodeSpec.DraDriver.HETGPU));
    }

    static Outcome run(Claims claims, DeployedConfiguration configuration, long seed, Consumer<String> progress)
            throws IOException, GpuDiscoveryException, InventoryFormatException {
        var modelled = DraNodes.of(nodes(), CardCatalog.defaults());
        return FreshCluster.run("DRA scene, " + claims.title, nodes(), progress, cluster -> {
            var client = cluster.client();
            var schedulerName = configuration.scheduler().schedulerName();
            for (var pod : PODS) {
                var claim = claims == Claims.HETGPU
                        ? HetgpuClaims.claim(NAMESPACE, pod.name(), pod.priority(), pod.gpus())
                        : HetgpuClaims.plain(NAMESPACE, pod.name(), pod.gpus());
                client.resource(ClaimObjects.template(NAMESPACE, pod.name(), claim)).create();
                client.pods().resource(new PodBuilder().withNewMetadata().withName(pod.name()).withNamespace(NAMESPACE).endMetadata()
                        .withNewSpec().withSchedulerName(schedulerName).addNewContainer().withName("main").withImage("train")
                        .withNewResources().addToRequests("cpu", new io.fabric8.kubernetes.api.model.Quantity("1")).endResources().endContainer()
                        .withResourceClaims(new PodResourceClaimBuilder().withName(HetgpuClaims.REQUEST).withResourceClaimTemplateName(pod.name()).build())
                        .endSpec().withNewStatus().withPhase("Pending").endStatus().build()).create();
            }
            new ResourceClaimController(client).reconcile();
            progress.accept("DRA scene, " + claims.title + ": " + PODS.size() + " pods and their claims created");
            // Every pod in one round, in the order they came: each sees the devices and cores those before it took.
            var driver = new SchedulerDriver(client, configuration.scheduler().withoutExtenders(), HttpClient.newHttpClient(), seed);
            var pending = new java.util.LinkedHashMap<String, String>();
            for (var decision : driver.scheduleRound()) {
                var name = decision.pod().substring(decision.pod().indexOf('/') + 1);
                if (decision instanceof Decision.Unschedulable unschedulable) {
                    pending.put(name, unschedulable.message());
                }
            }
            var placed = new ArrayList<Placed>();
            for (var pod : PODS) {
                placed(client, pod, modelled).ifPresent(placed::add);
            }
            pending.keySet().removeIf(name -> placed.stream().anyMatch(p -> p.pod().name().equals(name)));
            return new Outcome(claims, placed, pending);
        });
    }

    private static java.util.Optional<Placed> placed(KubernetesClient client, ScenePod pod, List<DraNodes.Node> nodes) {
        var statuses = client.pods().inNamespace(NAMESPACE).withName(pod.name()).get().getStatus().getResourceClaimStatuses();
        if (statuses == null || statuses.isEmpty()) {
            return java.util.Optional.empty();
        }
        var claim = client.resources(ResourceClaim.class).inNamespace(NAMESPACE).withName(statuses.get(0).getResourceClaimName()).get();
        if (claim == null || claim.getStatus() == null || claim.getStatus().getAllocation() == null) {
            return java.util.Optional.empty();
        }
        var results = claim.getStatus().getAllocation().getDevices().getResults();
        var nodeName = results.get(0).getPool();
        var node = nodes.stream().filter(n -> n.name().equals(nodeName)).findFirst().orElseThrow();
        var devices = results.stream().map(r -> r.getDevice()).toList();
        var cards = devices.stream().map(d -> card(node.attributes(d))).toList();
        return java.util.Optional.of(new Placed(pod, nodeName, devices, cards, node.nvlinkConnected(devices)));
    }

    private static String card(Map<String, DeviceAttribute> attributes) {
        var model = attributes.get("model") instanceof DeviceAttribute.StringValue s ? s.value() : "?";
        var tier = attributes.get("tier") instanceof DeviceAttribute.IntValue i ? Long.toString(i.value()) : "?";
        return model + " (tier " + tier + ")";
    }

    /** One run: each pod, where its claim went, on which cards, and for several GPUs whether they share NVLink. */
    static String describe(Outcome scene) {
        var text = new StringBuilder(String.format(Locale.ROOT, "  %s:%n", scene.claims().title));
        for (var pod : PODS) {
            var what = String.format(Locale.ROOT, "%s (%s, %d GPU%s)", pod.name(), pod.priority().name().toLowerCase(Locale.ROOT), pod.gpus(),
                    pod.gpus() == 1 ? "" : "s");
            var placed = scene.placed().stream().filter(p -> p.pod().equals(pod)).findFirst();
            if (placed.isEmpty()) {
                text.append(String.format(Locale.ROOT, "    %-32s pending: %s%n", what, scene.pending().getOrDefault(pod.name(), "not scheduled")));
                continue;
            }
            var p = placed.get();
            var cards = p.cards().stream().distinct().collect(Collectors.joining(", "));
            var nvlink = pod.gpus() > 1 ? (p.nvlinkConnected() ? ", NVLink-connected" : ", not NVLink-connected") : "";
            text.append(String.format(Locale.ROOT, "    %-32s %s %s: %s%s%n", what, p.node(), String.join(",", p.devices()), cards, nvlink));
        }
        return text.toString();
    }
}
