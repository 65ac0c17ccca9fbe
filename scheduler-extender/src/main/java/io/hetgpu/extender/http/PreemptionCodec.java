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
        return args;
    }

    public byte[] write(ExtenderPreemptionResult result) {
        try {
            return mapper.writeValueAsBytes(result);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("records of strings and numbers always serialise", e);
        }
    }
}
