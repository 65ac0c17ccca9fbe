package io.hetgpu.deviceplugin.node;

import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientImpl;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.InetAddress;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * fabric8's JDK HTTP client factory, for one {@code KubernetesClient}, whose close also ends the JDK clients it built.
 * fabric8 closes only their executor: each JDK client's selector thread stays in {@code epoll_wait} until the client is
 * collected, and HotSpot's exit waits up to 300 ms for a thread still in native code, so every stop of the plugin took
 * a third of a second on top of its own 24 ms. A client derived from a fabric8 client (other timeouts, a watch) shares
 * its JDK client and its closed flag, so this builds one JDK client per {@code KubernetesClient}, holds no more as
 * watches come and go, and ends none that is still in use when fabric8 closes the client.
 */
final class ClosingHttpClientFactory extends JdkHttpClientFactory {

    private final List<HttpClient> built = new CopyOnWriteArrayList<>();

    @Override
    protected HttpClient.Builder createNewHttpClientBuilder() {
        return new Recorded(super.createNewHttpClientBuilder());
    }

    @Override
    protected void closeHttpClient(JdkHttpClientImpl client) {
        super.closeHttpClient(client);
        built.forEach(HttpClient::shutdownNow);
    }

    /** The JDK clients built so far, for tests. */
    List<HttpClient> built() {
        return List.copyOf(built);
    }

    /** The JDK's builder, keeping what it builds. */
    private final class Recorded implements HttpClient.Builder {

        private final HttpClient.Builder builder;

        Recorded(HttpClient.Builder builder) {
            this.builder = builder;
        }

        @Override
        public HttpClient build() {
            var client = builder.build();
            built.add(client);
            return client;
        }

        @Override
        public HttpClient.Builder cookieHandler(CookieHandler cookieHandler) {
            builder.cookieHandler(cookieHandler);
            return this;
        }

        @Override
        public HttpClient.Builder connectTimeout(Duration duration) {
            builder.connectTimeout(duration);
            return this;
        }

        @Override
        public HttpClient.Builder sslContext(SSLContext sslContext) {
            builder.sslContext(sslContext);
            return this;
        }

        @Override
        public HttpClient.Builder sslParameters(SSLParameters sslParameters) {
            builder.sslParameters(sslParameters);
            return this;
        }

        @Override
        public HttpClient.Builder executor(Executor executor) {
            builder.executor(executor);
            return this;
        }

        @Override
        public HttpClient.Builder followRedirects(HttpClient.Redirect policy) {
            builder.followRedirects(policy);
            return this;
        }

        @Override
        public HttpClient.Builder version(HttpClient.Version version) {
            builder.version(version);
            return this;
        }

        @Override
        public HttpClient.Builder priority(int priority) {
            builder.priority(priority);
            return this;
        }

        @Override
        public HttpClient.Builder proxy(ProxySelector proxySelector) {
            builder.proxy(proxySelector);
            return this;
        }

        @Override
        public HttpClient.Builder authenticator(Authenticator authenticator) {
            builder.authenticator(authenticator);
            return this;
        }

        @Override
        public HttpClient.Builder localAddress(InetAddress localAddress) {
            builder.localAddress(localAddress);
            return this;
        }
    }
}
