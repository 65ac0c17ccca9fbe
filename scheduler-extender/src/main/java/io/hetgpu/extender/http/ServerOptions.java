package io.hetgpu.extender.http;

import java.nio.file.Path;

/**
 * How the HTTP front listens.
 *
 * @param host           address to bind
 * @param port           port (0 picks a free one, for tests)
 * @param bodyLimitBytes larger request bodies are refused with 413
 * @param tlsCert        PEM certificate for HTTPS, or null for plain HTTP
 * @param tlsKey         PEM private key for HTTPS, or null
 */
public record ServerOptions(String host, int port, long bodyLimitBytes, Path tlsCert, Path tlsKey) {

    public static final long DEFAULT_BODY_LIMIT = 64L * 1024 * 1024;

    public static ServerOptions plain(int port) {
        return new ServerOptions("0.0.0.0", port, DEFAULT_BODY_LIMIT, null, null);
    }

    public boolean tls() {
        return tlsCert != null;
    }
}
