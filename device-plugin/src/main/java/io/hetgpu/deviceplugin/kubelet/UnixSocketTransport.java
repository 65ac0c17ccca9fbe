package io.hetgpu.deviceplugin.kubelet;

import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * gRPC over Unix domain sockets, the only transport kubelet speaks to device plugins. One epoll event
 * loop, on one thread, serves every server and channel of the process; closing the transport stops it.
 * kubelet makes a few calls a minute, and gRPC runs the services' handlers on its own executor, not on
 * the loop: a second loop thread only held about 0.3 MiB of the plugin's memory.
 */
public final class UnixSocketTransport implements AutoCloseable {

    private final EventLoopGroup loop;

    public UnixSocketTransport() {
        Epoll.ensureAvailability(); // Linux only; fails with netty's reason (wrong OS, missing native library)
        this.loop = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("hetgpu-uds", true), EpollIoHandler.newFactory());
    }

    /** Serves the services on a fresh socket file at {@code socket}, replacing a stale file left by a killed run. */
    public Server serve(Path socket, BindableService... services) throws IOException {
        Files.deleteIfExists(socket);
        var builder = NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollServerDomainSocketChannel.class)
                .bossEventLoopGroup(loop)
                .workerEventLoopGroup(loop);
        for (var service : services) {
            builder.addService(service);
        }
        return builder.build().start();
    }

    /**
     * Stops a server {@link #serve} started at {@code socket} (its calls cut, waited for up to 2 s) and removes the socket
     * file, so that kubelet's folder watch sees the service go.
     */
    public static void stop(Server server, Path socket) throws InterruptedException, IOException {
        server.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        Files.deleteIfExists(socket);
    }

    /** A plaintext channel to the socket at {@code socket}; it connects lazily, on the first call. */
    public ManagedChannel connect(Path socket) {
        return NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollDomainSocketChannel.class)
                .eventLoopGroup(loop)
                .usePlaintext()
                .build();
    }

    @Override
    public void close() {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
