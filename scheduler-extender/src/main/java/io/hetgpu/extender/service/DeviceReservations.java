package io.hetgpu.extender.service;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The devices this extender handed out at bind time that the cluster view cannot show yet: between choosing devices
 * for a pod and its informer seeing the pod bound with its {@code hetgpu.io/gpu-devices} record, the node's state still
 * shows them free, and a second bind racing for the node would be given them too. Binds choose one node's devices one
 * at a time ({@link #exclusively}) and take the reserved ones out first.
 *
 * <p>A reservation ends when the view shows the pod bound there (its record is counted from then on), when the bind
 * fails ({@link Ledger#release}), or after {@code lifetime}: the pod was deleted before the view saw it bound, and nothing
 * else would ever end it.
 */
public final class DeviceReservations {

    private record Reservation(long mask, Instant at) {
    }

    private final ConcurrentHashMap<String, Map<String, Reservation>> byNode = new ConcurrentHashMap<>();
    private final Clock clock;
    private final Duration lifetime;

    public DeviceReservations(Clock clock, Duration lifetime) {
        this.clock = clock;
        this.lifetime = lifetime;
    }

    /** One node's reservations, handed to a choice that runs alone for that node. */
    public final class Ledger {
        private final Map<String, Reservation> reservations;

        private Ledger(Map<String, Reservation> reservations) {
            this.reservations = reservations;
        }

        /**
         * Devices reserved on the node, once the reservations of pods the view shows bound there ({@code shown}, by UID)
         * and those past their lifetime are dropped.
         */
        public long held(Set<String> shown) {
            var oldest = clock.instant().minus(lifetime);
            reservations.entrySet().removeIf(entry -> shown.contains(entry.getKey()) || entry.getValue().at().isBefore(oldest));
            long held = 0;
            for (var reservation : reservations.values()) {
                held |= reservation.mask();
            }
            return held;
        }

        public void reserve(String podUid, long mask) {
            reservations.put(podUid, new Reservation(mask, clock.instant()));
        }

        /** Gives back a failed bind's devices. */
        public void release(String podUid) {
            reservations.remove(podUid);
        }
    }

    /** Runs {@code choice} with the node's reservations while no other choice for the node runs. */
    public <T> T exclusively(String node, Function<Ledger, T> choice) {
        var reservations = byNode.computeIfAbsent(node, name -> new HashMap<>());
        synchronized (reservations) {
            return choice.apply(new Ledger(reservations));
        }
    }

    /** How many pods hold reservations on the node now. */
    public int reservedOn(String node) {
        var reservations = byNode.get(node);
        if (reservations == null) {
            return 0;
        }
        synchronized (reservations) {
            return reservations.size();
        }
    }
}
