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
import java.util.List;
import java.util.Map;
import java.util.function.Function;

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
        checkVictims("NodeNameToVictims", args.nodeNameToVictims(), ExtenderPreemptionArgs.Victims::pods, ".metadata.uid",
                victim -> victim.getMetadata() == null ? null : victim.getMetadata().getUid());
        checkVictims("NodeNameToMetaVictims", args.nodeNameToMetaVictims(), ExtenderPreemptionArgs.MetaVictims::pods, ".UID",
                ExtenderPreemptionArgs.MetaPod::uid);
    }

    private static <V, P> void checkVictims(String field, Map<String, V> byNode, Function<V, List<P>> pods, String uidField,
                                            Function<P, String> uid) throws WireFormatException {
        if (byNode == null) {
            return;
        }
        for (var entry : byNode.entrySet()) {
            var where = field + "[" + entry.getKey() + "]";
            if (entry.getValue() == null) {
                throw new WireFormatException(where + ": expected the node's victims, got null");
            }
            var victims = pods.apply(entry.getValue());
            for (int i = 0; victims != null && i < victims.size(); i++) {
                var victim = victims.get(i);
                if (victim == null || uid.apply(victim) == null || uid.apply(victim).isEmpty()) {
                    throw new WireFormatException(where + ".Pods[" + i + "]" + uidField + ": missing");
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
