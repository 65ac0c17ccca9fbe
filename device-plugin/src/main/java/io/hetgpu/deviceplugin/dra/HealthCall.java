package io.hetgpu.deviceplugin.dra;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/** One NodeWatchResources call of either version wired to {@link HealthStreams}: gRPC's signals in, messages out. */
final class HealthCall<T> implements HealthStreams.Sink {

    private final ServerCallStreamObserver<T> call;
    private final Function<HealthStreams.Report, T> message;

    private HealthCall(ServerCallStreamObserver<T> call, Function<HealthStreams.Report, T> message) {
        this.call = call;
        this.message = message;
    }

    /** Serves the call from {@code streams}, each report turned into that version's {@code message}. */
    static <T> void serve(HealthStreams streams, StreamObserver<T> response, Function<HealthStreams.Report, T> message) {
        var call = (ServerCallStreamObserver<T>) response;
        // Handlers are set before the first message: gRPC takes them only while the call starts.
        var held = new AtomicReference<HealthStreams.Stream>();
        call.setOnReadyHandler(() -> {
            var stream = held.get();
            if (stream != null) {
                stream.ready();
            }
        });
        call.setOnCancelHandler(() -> {
            var stream = held.get();
            if (stream != null) {
                stream.cancelled();
            }
        });
        streams.open(new HealthCall<>(call, message)).ifPresent(stream -> {
            held.set(stream);
            if (call.isCancelled()) { // cancelled before the stream was held: its handler found nothing to end
                stream.cancelled();
            } else {
                stream.ready(); // a ready signal that came before the stream was held
            }
        });
    }

    @Override
    public boolean ready() {
        return call.isReady() && !call.isCancelled();
    }

    @Override
    public void send(HealthStreams.Report report) {
        call.onNext(message.apply(report));
    }

    @Override
    public void complete() {
        if (!call.isCancelled()) {
            call.onCompleted();
        }
    }

    @Override
    public void fail(String reason) {
        call.onError(Status.UNAVAILABLE.withDescription(reason).asRuntimeException());
    }
}
