package io.hetgpu.gpu.inventory;

import com.fasterxml.jackson.databind.JsonNode;
import io.hetgpu.gpu.Quote;
import java.util.ArrayList;
import java.util.List;

/**
 * Typed, path-aware access to a JSON tree, so that every rejection names the exact field
 * ({@code devices[2].memoryMiB}) and quotes what was found there.
 */
record JsonFields(JsonNode node, String path) {

    static JsonFields root(JsonNode node, String what) throws InventoryFormatException {
        if (node == null || !node.isObject()) {
            throw new InventoryFormatException(what + ": expected a JSON object, got " + describe(node));
        }
        return new JsonFields(node, "");
    }

    JsonNode required(String field) throws InventoryFormatException {
        var value = node.get(field);
        if (value == null || value.isNull()) {
            throw new InventoryFormatException(at(field) + ": missing");
        }
        return value;
    }

    String text(String field) throws InventoryFormatException {
        var value = required(field);
        if (!value.isTextual() || value.asText().isBlank()) {
            throw new InventoryFormatException(at(field) + ": expected a non-empty string, got " + describe(value));
        }
        return value.asText();
    }

    long integer(String field, long min) throws InventoryFormatException {
        return integer(field, min, Long.MAX_VALUE);
    }

    long integer(String field, long min, long max) throws InventoryFormatException {
        var value = required(field);
        if (!value.isIntegralNumber() || !value.canConvertToLong() || value.asLong() < min || value.asLong() > max) {
            throw new InventoryFormatException(at(field) + ": expected an integer " + (max == Long.MAX_VALUE ? ">= " + min
                    : "from " + min + " to " + max) + ", got " + describe(value));
        }
        return value.asLong();
    }

    List<JsonFields> objects(String field) throws InventoryFormatException {
        var value = required(field);
        if (!value.isArray()) {
            throw new InventoryFormatException(at(field) + ": expected an array, got " + describe(value));
        }
        var items = new ArrayList<JsonFields>();
        for (int i = 0; i < value.size(); i++) {
            var item = value.get(i);
            var itemPath = at(field) + "[" + i + "]";
            if (!item.isObject()) {
                throw new InventoryFormatException(itemPath + ": expected an object, got " + describe(item));
            }
            items.add(new JsonFields(item, itemPath));
        }
        return items;
    }

    List<String> strings(JsonNode array, String arrayPath) throws InventoryFormatException {
        if (array == null || !array.isArray()) {
            throw new InventoryFormatException(arrayPath + ": expected an array, got " + describe(array));
        }
        var items = new ArrayList<String>();
        for (int i = 0; i < array.size(); i++) {
            var item = array.get(i);
            if (!item.isTextual()) {
                throw new InventoryFormatException(arrayPath + "[" + i + "]: expected a string, got " + describe(item));
            }
            items.add(item.asText());
        }
        return items;
    }

    String at(String field) {
        return path.isEmpty() ? field : path + "." + field;
    }

    static String describe(JsonNode value) {
        if (value == null || value.isMissingNode()) {
            return "nothing";
        }
        return Quote.cut(value.toString());
    }
}
