package io.hetgpu.extender.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.hetgpu.extender.service.ExtenderService;
import io.hetgpu.extender.wire.ExtenderPreemptionArgs;
import io.hetgpu.extender.wire.ExtenderPreemptionResult;
import java.io.IOException;

/** The preempt verb's bodies: ExtenderPreemptionArgs read as Go's decoder reads them, the result written. */
public final class PreemptionCodec {

    /** Go's decoder matches keys case-insensitively; so does this mapper. */
    private final ObjectMapper mapper = JsonMapper.builder()
            .enable(MapperFeature.ACCEPT_CASE_INSENSITIVE_PROPERTIES)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    public ExtenderPreemptionArgs read(byte[] body) throws WireFormatException {
        ExtenderPreemptionArgs args;
        try {
            args = mapper.readValue(body, ExtenderPreemptionArgs.class);
        } catch (JsonProcessingException e) {
            throw new WireFormatException("request body is not valid ExtenderPreemptionArgs JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new WireFormatException("request body could not be read: " + e.getMessage());
        }
        if (args == null || args.pod() == null) {
            throw new WireFormatException(ExtenderService.NULL_POD);
        }
        checkVictims(args);
        return args;
    }

    /**
     * Every victim is known by its UID: kube-scheduler sends whole pods as the API server gave them, or their UIDs. A
     * victim without one cannot be told from the others, so the request is refused naming it, before any is weighed.
     */
    private static void checkVictims(ExtenderPreemptionArgs args) throws WireFormatException {
        if (args.nodeNameToVictims() != null) {
            for (var entry : args.nodeNameToVictims().entrySet()) {
                var where = "NodeNameToVictims[" + entry.getKey() + "]";
                if (entry.getValue() == null) {
                    throw new WireFormatException(where + ": expected the node's victims, got null");
                }
                var pods = entry.getValue().pods();
                for (int i = 0; pods != null && i < pods.size(); i++) {
                    var victim = pods.get(i);
                    if (victim == null || victim.getMetadata() == null || victim.getMetadata().getUid() == null
                            || victim.getMetadata().getUid().isEmpty()) {
                        throw new WireFormatException(where + ".Pods[" + i + "].metadata.uid: missing");
                    }
                }
            }
        }
        if (args.nodeNameToMetaVictims() != null) {
            for (var entry : args.nodeNameToMetaVictims().entrySet()) {
                var where = "NodeNameToMetaVictims[" + entry.getKey() + "]";
                if (entry.getValue() == null) {
                    throw new WireFormatException(where + ": expected the node's victims, got null");
                }
                var pods = entry.getValue().pods();
                for (int i = 0; pods != null && i < pods.size(); i++) {
                    if (pods.get(i) == null || pods.get(i).uid() == null || pods.get(i).uid().isEmpty()) {
                        throw new WireFormatException(where + ".Pods[" + i + "].UID: missing");
                    }
                }
            }
        }
    }

    public byte[] write(ExtenderPreemptionResult result) {
        try {
            return mapper.writeValueAsBytes(result);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("records of strings and numbers always serialise", e);
        }
    }
}
