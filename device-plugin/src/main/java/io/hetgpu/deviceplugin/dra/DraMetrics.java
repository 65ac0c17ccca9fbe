package io.hetgpu.deviceplugin.dra;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.function.IntSupplier;

/** The DRA plugin's counters, beside the GPU health gauges every mode has. */
public final class DraMetrics {

    private final Counter prepared;
    private final Counter prepareFailures;
    private final Counter unprepared;
    private final Counter registrations;
    private final MeterRegistry registry;

    /** Scraped as {@code hetgpu_dra_claims_prepared_total} and so on. */
    public DraMetrics(MeterRegistry registry) {
        this.registry = registry;
        prepared = Counter.builder("hetgpu.dra.claims.prepared").description("Claims prepared (CDI spec written)").register(registry);
        prepareFailures = Counter.builder("hetgpu.dra.prepare.failures")
                .description("Claims kubelet was answered an error for, in their entry").register(registry);
        unprepared = Counter.builder("hetgpu.dra.claims.unprepared").description("Prepared claims unprepared").register(registry);
        registrations = Counter.builder("hetgpu.dra.registrations").description("Registrations kubelet confirmed").register(registry);
    }

    /** Counted, never scraped: for tests and tools that start the pieces alone. */
    public static DraMetrics unscraped() {
        return new DraMetrics(new SimpleMeterRegistry());
    }

    /** {@code hetgpu_dra_health_streams}: kubelet's health streams open now; 0 where kubelet's gate is off. */
    void healthStreams(IntSupplier open) {
        Gauge.builder("hetgpu.dra.health.streams", open, IntSupplier::getAsInt)
                .description("kubelet's device health streams open now").register(registry);
    }

    void prepared() {
        prepared.increment();
    }

    void prepareFailed() {
        prepareFailures.increment();
    }

    void unprepared() {
        unprepared.increment();
    }

    void registered() {
        registrations.increment();
    }
}
