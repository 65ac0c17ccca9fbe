package io.hetgpu.deviceplugin.dra;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.hetgpu.deviceplugin.api.drahealth.v1alpha1.DRAResourceHealthGrpc;
import io.hetgpu.deviceplugin.api.drahealth.v1alpha1.HealthStatus;
import io.hetgpu.deviceplugin.api.drahealth.v1alpha1.NodeWatchResourcesRequest;
import io.hetgpu.deviceplugin.api.drahealth.v1alpha1.NodeWatchResourcesResponse;
import io.hetgpu.deviceplugin.kubelet.UnixSocketTransport;
import io.hetgpu.gpu.DeviceHealth;
import io.hetgpu.gpu.Fixtures;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.discovery.HealthChange;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The health stream over a real Unix socket, with gRPC's own flow control: a kubelet that stops reading. */
class HealthCallTest {

    @TempDir
    Path temp;

    private final NodeTopology dgx1 = Fixtures.dgx1V100();
    private final UnixSocketTransport transport = new UnixSocketTransport();
    private HealthStreams streams;
    private Server server;
    private ManagedChannel channel;

    @BeforeEach
    void serve() throws Exception {
        streams = new HealthStreams("gpu-node-1", dgx1, new HealthStreams.Settings(2, Duration.ofHours(1), Duration.ofHours(2)),
                Clock.systemUTC());
        server = transport.serve(temp.resolve("dra.sock"), new DraHealthServiceV1alpha1(streams));
        channel = transport.connect(temp.resolve("dra.sock"));
    }

    @AfterEach
    void stop() throws Exception {
        streams.close();
        channel.shutdownNow();
        UnixSocketTransport.stop(server, temp.resolve("dra.sock"));
        transport.close();
    }

    @Test
    void aKubeletThatStopsReadingCostsAFlowControlWindowNotAMessagePerChangeAndThenGetsTheLatestState() {
        var stuck = new Reader();
        DRAResourceHealthGrpc.newStub(channel).nodeWatchResources(NodeWatchResourcesRequest.getDefaultInstance(), stuck);
        await().atMost(Duration.ofSeconds(10)).until(() -> streams.openStreams() == 1);

        int changes = 50_000;
        for (int i = 0; i < changes; i++) {
            streams.changed(new HealthChange(dgx1.device(i % 8).uuid(), i % 3 == 0 ? DeviceHealth.UNHEALTHY : DeviceHealth.HEALTHY,
                    "change " + i));
        }
        streams.changed(new HealthChange(dgx1.device(2).uuid(), DeviceHealth.UNHEALTHY, "XID 79 (GPU has fallen off the bus)"));

        stuck.call.request(Integer.MAX_VALUE);
        await().atMost(Duration.ofSeconds(20)).until(() -> !stuck.messages.isEmpty()
                && "XID 79 (GPU has fallen off the bus)".equals(stuck.last().getDevices(2).getMessage()));
        assertThat(stuck.messages.size()).as("what gRPC's windows held, then the state once: far fewer than the changes")
                .isLessThan(changes / 5);
        var last = stuck.last();
        assertThat(last.getDevices(2).getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
        // The last change of each other GPU (49,992 + position) decides its state: i % 3 == 0 is unhealthy.
        for (int position = 0; position < 8; position++) {
            if (position != 2) {
                int lastChange = changes - 8 + position;
                assertThat(last.getDevices(position).getHealth()).as("gpu-%d", position)
                        .isEqualTo(lastChange % 3 == 0 ? HealthStatus.UNHEALTHY : HealthStatus.HEALTHY);
            }
        }
    }

    /** A kubelet that reads nothing until told to. */
    private static final class Reader implements ClientResponseObserver<NodeWatchResourcesRequest, NodeWatchResourcesResponse> {

        final List<NodeWatchResourcesResponse> messages = new CopyOnWriteArrayList<>();
        volatile ClientCallStreamObserver<NodeWatchResourcesRequest> call;

        @Override
        public void beforeStart(ClientCallStreamObserver<NodeWatchResourcesRequest> requestStream) {
            call = requestStream;
            requestStream.disableAutoRequestWithInitial(0);
        }

        NodeWatchResourcesResponse last() {
            return messages.get(messages.size() - 1);
        }

        @Override
        public void onNext(NodeWatchResourcesResponse message) {
            messages.add(message);
        }

        @Override
        public void onError(Throwable error) {
        }

        @Override
        public void onCompleted() {
        }
    }
}
