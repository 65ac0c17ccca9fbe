package io.hetgpu.testcluster.manifests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.Descriptors;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Message;
import com.google.protobuf.StructProto;
import com.google.protobuf.Value;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code JSONPatch} type a MutatingAdmissionPolicy's expression builds ({@code op}, {@code path}, {@code from},
 * {@code value}), declared for CEL as a message whose value is any JSON value, and the patches it returns applied to
 * an object as RFC 6902 applies them: the operations hetgpu's policies use (add, replace, remove, test).
 */
final class JsonPatches {

    /** One operation as the expression built it. */
    record Operation(String op, String path, JsonNode value) {
    }

    static final Descriptors.Descriptor TYPE = declare();

    private JsonPatches() {
    }

    private static Descriptors.Descriptor declare() {
        var message = DescriptorProto.newBuilder().setName("JSONPatch");
        int number = 1;
        for (var name : List.of("op", "path", "from")) {
            message.addField(FieldDescriptorProto.newBuilder().setName(name).setNumber(number++).setType(FieldDescriptorProto.Type.TYPE_STRING));
        }
        message.addField(FieldDescriptorProto.newBuilder().setName("value").setNumber(number)
                .setType(FieldDescriptorProto.Type.TYPE_MESSAGE).setTypeName(".google.protobuf.Value"));
        var file = FileDescriptorProto.newBuilder().setName("hetgpu/test/jsonpatch.proto").setSyntax("proto3")
                .addDependency("google/protobuf/struct.proto").addMessageType(message).build();
        try {
            return Descriptors.FileDescriptor.buildFrom(file, new Descriptors.FileDescriptor[] {StructProto.getDescriptor()})
                    .findMessageTypeByName("JSONPatch");
        } catch (Descriptors.DescriptorValidationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The operations of an expression's result: a list of JSONPatch messages, or an AssertionError saying what it is instead. */
    static List<Operation> operations(Object result) {
        if (!(result instanceof List<?> list)) {
            throw new AssertionError("a JSONPatch expression returned " + result + ", not a list");
        }
        var operations = new ArrayList<Operation>();
        for (var item : list) {
            if (!(item instanceof Message message) || !message.getDescriptorForType().getFullName().equals("JSONPatch")) {
                throw new AssertionError("a JSONPatch expression returned " + item + " in its list, not a JSONPatch");
            }
            var fields = message.getDescriptorForType();
            var value = message.hasField(fields.findFieldByName("value")) ? json((Value) message.getField(fields.findFieldByName("value"))) : null;
            operations.add(new Operation((String) message.getField(fields.findFieldByName("op")),
                    (String) message.getField(fields.findFieldByName("path")), value));
        }
        return operations;
    }

    /** {@code object} with the operations applied in order; a failed test or a path that is not there is an AssertionError. */
    static JsonNode apply(JsonNode object, List<Operation> operations) {
        var patched = object.deepCopy();
        for (var operation : operations) {
            var path = pointer(operation.path());
            var parent = patched.at(path.parent());
            String key = path.key();
            switch (operation.op()) {
                case "test" -> {
                    if (!patched.at(operation.path()).equals(operation.value())) {
                        throw new AssertionError("JSONPatch test failed at " + operation.path());
                    }
                }
                case "replace", "remove" -> {
                    if (patched.at(operation.path()).isMissingNode()) {
                        throw new AssertionError("JSONPatch " + operation.op() + " of " + operation.path() + ", which the object lacks");
                    }
                    set(parent, key, "replace".equals(operation.op()) ? operation.value() : null);
                }
                case "add" -> set(parent, key, operation.value());
                default -> throw new AssertionError("JSONPatch operation " + operation.op() + " is not modelled here");
            }
        }
        return patched;
    }

    private record Pointer(String parent, String key) {
    }

    private static Pointer pointer(String path) {
        int slash = path.lastIndexOf('/');
        if (slash < 0) {
            throw new AssertionError("JSONPatch path " + path + " is not a JSON pointer");
        }
        return new Pointer(path.substring(0, slash), path.substring(slash + 1).replace("~1", "/").replace("~0", "~"));
    }

    private static void set(JsonNode parent, String key, JsonNode value) {
        switch (parent) {
            case ObjectNode object -> {
                if (value == null) {
                    object.remove(key);
                } else {
                    object.set(key, value);
                }
            }
            case ArrayNode array when "-".equals(key) -> array.add(value);
            case ArrayNode array -> {
                int index = Integer.parseInt(key);
                if (value == null) {
                    array.remove(index);
                } else {
                    array.set(index, value);
                }
            }
            default -> throw new AssertionError("JSONPatch into " + parent + ", which is neither an object nor an array");
        }
    }

    private static JsonNode json(Value value) {
        var factory = JsonNodeFactory.instance;
        return switch (value.getKindCase()) {
            case NULL_VALUE, KIND_NOT_SET -> factory.nullNode();
            case NUMBER_VALUE -> value.getNumberValue() == Math.rint(value.getNumberValue())
                    ? factory.numberNode((long) value.getNumberValue()) : factory.numberNode(value.getNumberValue());
            case STRING_VALUE -> factory.textNode(value.getStringValue());
            case BOOL_VALUE -> factory.booleanNode(value.getBoolValue());
            case STRUCT_VALUE -> {
                var object = factory.objectNode();
                value.getStructValue().getFieldsMap().forEach((name, field) -> object.set(name, json(field)));
                yield object;
            }
            case LIST_VALUE -> {
                var array = factory.arrayNode();
                value.getListValue().getValuesList().forEach(item -> array.add(json(item)));
                yield array;
            }
        };
    }
}
