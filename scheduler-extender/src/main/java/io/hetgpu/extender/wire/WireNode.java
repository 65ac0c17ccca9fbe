package io.hetgpu.extender.wire;

import io.hetgpu.extender.model.NodeFacts;

/**
 * One Node of a request's node list: the facts the policy reads, and where its JSON lies in the request
 * body, so a node that fits is echoed back byte for byte instead of being rebuilt.
 */
public record WireNode(NodeFacts facts, byte[] body, int start, int end) {
}
