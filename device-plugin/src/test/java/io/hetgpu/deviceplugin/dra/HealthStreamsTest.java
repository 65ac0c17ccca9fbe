package io.hetgpu.deviceplugin.dra;

import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.discovery.HealthChange;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** kubelet's health streams without gRPC: what each message says, and what a slow, stuck or second reader gets. */
class HealthStreamsTest {

    private static final String POOL = "gpu-node-1";
    /** Long enough that no resend comes during a test that does not wait for one. */
    private static final HealthStreams.Settings QUIET = new HealthStreams.Settings(2, Duration.ofHours(1), Duration.ofHours(2));

    private final NodeTopology dgx1 = Fixtures.dgx1V100();
    private final Clock clock = Clock.fixed(Instant.parse("2026-11-28T12:00:00Z"), ZoneOffset.UTC);
    private HealthStreams streams = new HealthStreams(POOL, dgx1, QUIET, clock);

    @AfterEach
    void close() {
        streams.close();
    }

    @Test
    void aStreamStartsWithEveryDeviceOfThePoolAndGetsEachChange() {
        var kubelet = new FakeSink();
        assertThat(streams.open(kubelet)).isPresent();

        assertThat(kubelet.sent).hasSize(1);
        var initial = kubelet.sent.get(0);
        assertThat(initial.devices()).hasSize(8).allSatisfy(device -> {
            assertThat(device.poolName()).isEqualTo(POOL);
            assertThat(device.health()).isEqualTo(DeviceHealth.HEALTHY);
        });
        assertThat(initial.devices()).extracting(HealthStreams.DeviceState::deviceName).startsWith("gpu-0", "gpu-1").endsWith("gpu-7");
        assertThat(initial.at()).isEqualTo(clock.instant());
        assertThat(initial.timeout()).isEqualTo(Duration.ofHours(2));

        streams.changed(xid(3));
        streams.changed(new HealthChange("GPU-not-on-this-node", DeviceHealth.UNHEALTHY, "XID 79"));

        assertThat(kubelet.sent).as("a device of another node changes nothing here, and sends nothing").hasSize(2);
        var after = kubelet.sent.get(1).devices().get(3);
        assertThat(after.deviceName()).isEqualTo("gpu-3");
        assertThat(after.health()).isEqualTo(DeviceHealth.UNHEALTHY);
        assertThat(after.message()).isEqualTo("XID 79 (GPU has fallen off the bus)");
    }

    @Test
    void aStuckReaderHoldsOneStateNotABacklogAndGetsTheLatestOnceItReads() {
        var stuck = new FakeSink();
        var stream = streams.open(stuck).orElseThrow();
        stuck.ready = false;

        for (int i = 0; i < 10_000; i++) {
            streams.changed(i % 2 == 0 ? xid(1) : recovered(1));
        }
        streams.changed(xid(6));

        assertThat(stuck.sent).as("nothing queued behind a reader that does not read").hasSize(1);
        stuck.ready = true;
        stream.ready();
        assertThat(stuck.sent).as("one message, the state now: the 10,000 transitions between are dropped").hasSize(2);
        var latest = stuck.sent.get(1).devices();
        assertThat(latest.get(1).health()).isEqualTo(DeviceHealth.HEALTHY);
        assertThat(latest.get(6).health()).isEqualTo(DeviceHealth.UNHEALTHY);
        stream.ready();
        assertThat(stuck.sent).as("a ready signal with nothing new sends nothing").hasSize(2);
    }

    @Test
    void twoStreamsAreIndependentAndAThirdIsRefusedWithItsReason() {
        var stuck = new FakeSink();
        var reading = new FakeSink();
        streams.open(stuck).orElseThrow();
        streams.open(reading).orElseThrow();
        stuck.ready = false;

        streams.changed(xid(2));
        streams.changed(xid(4));

        assertThat(reading.sent).as("a stuck stream does not hold the other back").hasSize(3);
        assertThat(stuck.sent).hasSize(1);
        var third = new FakeSink();
        assertThat(streams.open(third)).isEmpty();
        assertThat(third.failed).contains("2 health streams are open already");
        assertThat(streams.openStreams()).isEqualTo(2);
    }

    @Test
    void aCancelledStreamIsForgottenAndFreesItsPlace() {
        var gone = new FakeSink();
        streams.open(gone).orElseThrow().cancelled();
        streams.changed(xid(0));

        assertThat(gone.sent).hasSize(1);
        assertThat(streams.openStreams()).isZero();
        assertThat(streams.open(new FakeSink())).isPresent();
        assertThat(streams.open(new FakeSink())).isPresent();
    }

    @Test
    void closingEndsEveryStreamNormallyAndRefusesNewOnes() {
        var first = new FakeSink();
        var second = new FakeSink();
        streams.open(first).orElseThrow();
        var stream = streams.open(second).orElseThrow();
        second.ready = false;
        streams.changed(xid(5));

        streams.close();

        assertThat(first.completed).isTrue();
        assertThat(second.completed).as("a stuck stream is ended too").isTrue();
        second.ready = true;
        stream.ready();
        streams.changed(recovered(5));
        assertThat(first.sent).as("nothing after the end").hasSize(2);
        assertThat(second.sent).hasSize(1);
        var late = new FakeSink();
        assertThat(streams.open(late)).isEmpty();
        assertThat(late.failed).contains("stopping");
    }

    @Test
    void theStateIsSentAgainWithoutAChangeSoKubeletDoesNotTimeItOut() {
        streams.close();
        streams = new HealthStreams(POOL, dgx1.withHealth(java.util.Map.of(dgx1.device(7).uuid(), DeviceHealth.UNHEALTHY)),
                new HealthStreams.Settings(1, Duration.ofMillis(20), Duration.ofSeconds(1)), Clock.systemUTC());
        var kubelet = new FakeSink();
        streams.open(kubelet).orElseThrow();

        await().atMost(Duration.ofSeconds(5)).until(() -> kubelet.sent.size() >= 3);
        assertThat(kubelet.sent.get(0).devices().get(7).health()).as("unhealthy from the start").isEqualTo(DeviceHealth.UNHEALTHY);
        assertThat(kubelet.sent.get(2).devices()).isEqualTo(kubelet.sent.get(0).devices());
    }

    @Test
    void aLongReasonIsCutBelowKubeletsLimit() {
        var kubelet = new FakeSink();
        streams.open(kubelet).orElseThrow();

        streams.changed(new HealthChange(dgx1.device(0).uuid(), DeviceHealth.UNHEALTHY, "x".repeat(100_000)));

        assertThat(kubelet.sent.get(1).devices().get(0).message()).hasSizeLessThanOrEqualTo(HealthStreams.MAX_MESSAGE).contains("…");
    }

    @Test
    void settingsThatWouldLetKubeletTimeOutBetweenResendsAreRefused() {
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
                .isThrownBy(() -> new HealthStreams.Settings(1, Duration.ofSeconds(30), Duration.ofSeconds(30)))
                .withMessageContaining("shorter than timeout");
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
                .isThrownBy(() -> new HealthStreams.Settings(0, Duration.ofSeconds(1), Duration.ofSeconds(3)))
                .withMessageContaining("maxStreams");
    }

    private HealthChange xid(int position) {
        return new HealthChange(dgx1.device(position).uuid(), DeviceHealth.UNHEALTHY, "XID 79 (GPU has fallen off the bus)");
    }

    private HealthChange recovered(int position) {
        return new HealthChange(dgx1.device(position).uuid(), DeviceHealth.HEALTHY, "answered normally for 60 s");
    }

    /** A call whose reader keeps up while {@code ready}, and holds nothing itself: what it was sent is what went out. */
    private static final class FakeSink implements HealthStreams.Sink {

        final List<HealthStreams.Report> sent = new CopyOnWriteArrayList<>();
        volatile boolean ready = true;
        volatile boolean completed;
        volatile String failed = "";

        @Override
        public boolean ready() {
            return ready;
        }

        @Override
        public void send(HealthStreams.Report report) {
            sent.add(report);
        }

        @Override
        public void complete() {
            completed = true;
        }

        @Override
        public void fail(String reason) {
            failed = reason;
        }
    }
}
