package io.hetgpu.extender.service;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.wire.WireNode;
import io.hetgpu.extender.wire.RequestedNames;
import java.util.List;

/**
 * A request's nodes as the policy judges them, each name once, in request order.
 *
 * @param states  the nodes known, as states
 * @param wire    per state, the request's node (a Nodes request), else null (a NodeNames request)
 * @param unknown names the cluster view does not know, each once
 * @param unnamed whether the request named a node "" (or sent one without a name)
 * @param error   why the request's nodes cannot be resolved at all, else ""
 * @param trace   what the {@link RequestCache} that resolved them keeps about them until they are assessed
 * @param asked   a NodeNames request's names as its bytes, when it came as bytes; else null
 * @param indexes with {@code asked}: per state, the index of its name in {@code asked}, so that the answer writes the
 *                name as it came
 */
public record ResolvedNodes(NodeState[] states, List<WireNode> wire, List<String> unknown, boolean unnamed, String error,
                            RequestCache.Trace trace, RequestedNames asked, int[] indexes) {

    ResolvedNodes(NodeState[] states, List<WireNode> wire, List<String> unknown, boolean unnamed, String error, RequestCache.Trace trace) {
        this(states, wire, unknown, unnamed, error, trace, null, null);
    }

    static ResolvedNodes error(String message) {
        return new ResolvedNodes(new NodeState[0], null, List.of(), false, message, RequestCache.Trace.NONE);
    }

    int size() {
        return states.length;
    }

    /** A NodeNames request: the answer names nodes instead of echoing them. */
    boolean byName() {
        return wire == null;
    }
}
