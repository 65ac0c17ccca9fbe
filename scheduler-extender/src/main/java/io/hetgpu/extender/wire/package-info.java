/**
 * The records of kube-scheduler's extender API ({@code k8s.io/kube-scheduler/extender/v1}), as kube-scheduler
 * sends and reads them. Named for what they are, the wire format, rather than for who reads them: the HTTP
 * front decodes and encodes them, the service answers in them, and neither owns them.
 */
package io.hetgpu.extender.wire;
