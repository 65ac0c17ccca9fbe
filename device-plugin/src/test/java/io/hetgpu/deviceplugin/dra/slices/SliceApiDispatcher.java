package io.hetgpu.deviceplugin.dra.slices;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * fabric8's CRUD mock as an API server's ResourceSlices: the {@code spec.nodeName}/{@code spec.driver} field selectors
 * it cannot match are dropped (the publisher filters what it lists itself), the next {@link #failures} slice requests
 * answer 500, and with {@link #dropTaints} device taints are dropped from what is written, as an API server without the
 * DRADeviceTaints gate does.
 */
final class SliceApiDispatcher extends KubernetesCrudDispatcher {

    final AtomicInteger failures = new AtomicInteger();
    final AtomicInteger sliceWrites = new AtomicInteger();
    volatile boolean dropTaints;

    @Override
    public MockResponse dispatch(RecordedRequest request) {
        var path = request.getPath();
        if (path.contains("/resourceslices")) {
            if (failures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                return new MockResponse().setResponseCode(500).setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                        + "\"message\":\"etcdserver: request timed out\",\"code\":500}");
            }
            var method = request.getMethod();
            if ("POST".equals(method) || "PUT".equals(method)) {
                sliceWrites.incrementAndGet();
                if (dropTaints) {
                    var slice = Serialization.unmarshal(request.getUtf8Body(), ResourceSlice.class);
                    var stripped = new ResourceSliceBuilder(slice).editSpec().withDevices(slice.getSpec().getDevices().stream()
                            .map(d -> new DeviceBuilder(d).withTaints((java.util.List<io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint>) null).build()).toList()).endSpec().build();
                    request = new RecordedRequest(request.getHttpVersion(), request.method(), path, request.getHeaders(),
                            new Buffer().writeUtf8(Serialization.asJson(stripped)));
                }
            }
        }
        return super.dispatch(request);
    }

    @Override
    public MockResponse handleGet(String path) {
        return super.handleGet(withoutSpecSelectors(path));
    }

    static String withoutSpecSelectors(String path) {
        return path.replaceAll("fieldSelector=spec\\.[^&]*&?", "").replaceAll("[?&]$", "");
    }
}
