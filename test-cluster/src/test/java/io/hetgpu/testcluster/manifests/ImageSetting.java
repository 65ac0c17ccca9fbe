package io.hetgpu.testcluster.manifests;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;

/** One entry of images/kustomization.yaml: the name the base uses and what kustomize makes of it. */
record ImageSetting(String name, String newName, String newTag, String digest) {

    static List<ImageSetting> fromComponent() {
        var settings = new ArrayList<ImageSetting>();
        for (JsonNode image : ManifestTree.kustomization(ManifestTree.IMAGES_COMPONENT).path("images")) {
            settings.add(new ImageSetting(image.path("name").asText(), text(image, "newName"), text(image, "newTag"),
                    text(image, "digest")));
        }
        return settings;
    }

    private static String text(JsonNode node, String field) {
        return node.hasNonNull(field) ? node.path(field).asText() : null;
    }

    /** The repository a rendered container names. */
    String repository() {
        return newName == null ? name : newName;
    }

    /** The image a rendered container must name. */
    String rendered() {
        if (digest != null) {
            return repository() + "@" + digest;
        }
        return newTag == null ? repository() : repository() + ":" + newTag;
    }

    static ImageSetting of(Program program) {
        return fromComponent().stream().filter(s -> s.name().equals(program.placeholderImage)).findFirst()
                .orElseThrow(() -> new AssertionError("images/kustomization.yaml names no image " + program.placeholderImage));
    }
}
