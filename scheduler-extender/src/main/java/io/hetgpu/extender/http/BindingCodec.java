package io.hetgpu.extender.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.hetgpu.extender.wire.ExtenderBindingArgs;
import io.hetgpu.extender.wire.ExtenderBindingResult;
import java.io.IOException;

/** The bind verb's bodies: ExtenderBindingArgs read as Go's decoder reads them (keys in any case), the result written. */
public final class BindingCodec {

    private final ObjectMapper mapper = JsonMapper.builder()
            .enable(MapperFeature.ACCEPT_CASE_INSENSITIVE_PROPERTIES)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    public ExtenderBindingArgs read(byte[] body) throws WireFormatException {
        ExtenderBindingArgs args;
        try {
            args = mapper.readValue(body, ExtenderBindingArgs.class);
        } catch (JsonProcessingException e) {
            throw new WireFormatException("request body is not valid ExtenderBindingArgs JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new WireFormatException("request body could not be read: " + e.getMessage());
        }
        if (args == null) {
            throw new WireFormatException("request body is empty: kube-scheduler sends ExtenderBindingArgs {PodName, PodNamespace, PodUID, Node}");
        }
        return args;
    }

    public byte[] write(ExtenderBindingResult result) {
        try {
            return mapper.writeValueAsBytes(result);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a record of one string always serialises", e);
        }
    }
}
