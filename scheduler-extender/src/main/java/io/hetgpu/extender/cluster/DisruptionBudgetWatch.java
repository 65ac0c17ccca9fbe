package io.hetgpu.extender.cluster;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.hetgpu.extender.model.DisruptionBudgets;
import io.hetgpu.extender.model.LabelSelection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's PodDisruptionBudgets ({@code policy/v1}), followed by an informer for the eviction floor, which must not
 * count a guarded pod's GPUs as reachable. Not part of the view's sync: until the first list the budgets are
 * {@link DisruptionBudgets#UNKNOWN} (every pod guarded, so the floor counts only free GPUs), and a failing watch is
 * retried for ever with fabric8's backoff. kube-scheduler's own ClusterRole, which the extender's service account is
 * bound to, lets it list and watch them.
 */
final class DisruptionBudgetWatch implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DisruptionBudgetWatch.class);

    private final SharedIndexInformer<PodDisruptionBudget> informer;
    /** Bumped by every event: the budgets are read again at the next question after a change, not at every event. */
    private final AtomicLong changes = new AtomicLong();
    private volatile Read read = new Read(-1, DisruptionBudgets.UNKNOWN);

    private record Read(long change, DisruptionBudgets budgets) {
    }

    DisruptionBudgetWatch(KubernetesClient client) {
        this.informer = client.policy().v1().podDisruptionBudget().inAnyNamespace().runnableInformer(0);
        informer.exceptionHandler((isStarted, failure) -> {
            LOG.warn("{} PodDisruptionBudgets from the API server failed, retrying with backoff: {}", isStarted ? "following" : "listing",
                    ApiFaults.describe(failure));
            return true;
        });
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(PodDisruptionBudget budget) {
                changes.incrementAndGet();
            }

            @Override
            public void onUpdate(PodDisruptionBudget before, PodDisruptionBudget after) {
                changes.incrementAndGet();
            }

            @Override
            public void onDelete(PodDisruptionBudget budget, boolean finalStateUnknown) {
                changes.incrementAndGet();
            }
        });
    }

    void start() {
        informer.start();
    }

    /** The budgets as of the last event, read from the informer's store once per change. */
    DisruptionBudgets current() {
        if (!informer.hasSynced()) {
            return DisruptionBudgets.UNKNOWN;
        }
        long change = changes.get();
        var last = read;
        if (last.change() == change) {
            return last.budgets();
        }
        var budgets = DisruptionBudgets.of(informer.getStore().list().stream().map(DisruptionBudgetWatch::budget).toList());
        read = new Read(change, budgets);
        return budgets;
    }

    /** A budget as preemption weighs it; a selector that cannot be read selects nothing, as kube-scheduler skips it. */
    static DisruptionBudgets.Budget budget(PodDisruptionBudget budget) {
        var spec = budget.getSpec();
        var status = budget.getStatus();
        return new DisruptionBudgets.Budget(Objects.requireNonNullElse(budget.getMetadata().getNamespace(), ""),
                spec == null ? LabelSelection.INVALID : selection(spec.getSelector()),
                status == null || status.getDisruptionsAllowed() == null ? 0 : status.getDisruptionsAllowed(),
                status == null || status.getDisruptedPods() == null ? Set.of() : status.getDisruptedPods().keySet());
    }

    static LabelSelection selection(LabelSelector selector) {
        if (selector == null) {
            return LabelSelection.INVALID;
        }
        var requirements = new ArrayList<LabelSelection.Requirement>();
        for (var expression : Objects.requireNonNullElse(selector.getMatchExpressions(), List.<io.fabric8.kubernetes.api.model.LabelSelectorRequirement>of())) {
            var operator = LabelSelection.Operator.named(expression.getOperator());
            if (operator == null || expression.getKey() == null) {
                return LabelSelection.INVALID;
            }
            var values = Objects.requireNonNullElse(expression.getValues(), List.<String>of());
            boolean needsValues = operator == LabelSelection.Operator.IN || operator == LabelSelection.Operator.NOT_IN;
            if (needsValues == values.isEmpty() || values.contains(null)) {
                // As metav1.LabelSelectorAsSelector refuses: In and NotIn need values, Exists and DoesNotExist take none.
                return LabelSelection.INVALID;
            }
            requirements.add(new LabelSelection.Requirement(expression.getKey(), operator, Set.copyOf(values)));
        }
        var labels = Objects.requireNonNullElse(selector.getMatchLabels(), Map.<String, String>of());
        if (labels.containsKey(null) || labels.containsValue(null)) {
            return LabelSelection.INVALID;
        }
        return new LabelSelection(labels, requirements);
    }

    @Override
    public void close() {
        informer.close();
    }
}
