package io.hetgpu.extender;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** Loads the realistic Kubernetes JSON fixtures of src/test/resources. */
public final class KubeJson {

    public static final ObjectMapper MAPPER = new ObjectMapper().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private KubeJson() {
    }

    public static String text(String resource) {
        try (var in = KubeJson.class.getResourceAsStream("/" + resource)) {
            if (in == null) {
                throw new IllegalArgumentException("no test resource " + resource);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static <T> T read(String resource, Class<T> type) {
        try {
            return MAPPER.readValue(text(resource), type);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static Pod trainingPod() {
        return read("pod-pytorch-worker.json", Pod.class);
    }
}
