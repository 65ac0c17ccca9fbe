package io.hetgpu.deviceplugin.pods;

import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.mockwebserver.http.MockResponse;

/**
 * fabric8's CRUD mock matches only {@code metadata.name}/{@code metadata.namespace} field selectors and answers
 * any other with nothing at all. This one drops a {@code spec.nodeName} selector instead, so the plugin's watch
 * gets the pods of every node, and the plugin's own check that a pod is bound to its node is what keeps the others
 * out (a real API server would not even send them).
 */
final class NodeBlindCrudDispatcher extends KubernetesCrudDispatcher {

    @Override
    public MockResponse handleGet(String path) {
        return super.handleGet(withoutNodeSelector(path));
    }

    @Override
    public MockResponse handleWatch(String path) {
        return super.handleWatch(withoutNodeSelector(path));
    }

    static String withoutNodeSelector(String path) {
        return path.replaceAll("fieldSelector=spec\\.nodeName%3D[^&]*&?", "").replaceAll("[?&]$", "");
    }
}
