package io.hetgpu.kubescheduler.dra;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOptions;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.CelValidationException;
import dev.cel.common.types.CelKind;
import dev.cel.common.types.MapType;
import dev.cel.common.types.OpaqueType;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import java.util.AbstractMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Device selectors, the CEL expressions of DeviceClasses and requests, compiled and evaluated as kube-scheduler's DRA
 * plugin does (k8s.io/dynamic-resource-allocation/cel): one variable, {@code device}, with {@code driver},
 * {@code attributes[domain][id]} and {@code capacity[domain][id]}; a name without a domain under the driver's; an unknown
 * domain an empty map, so that {@code has()} on it is false; versions as {@code kubernetes.Semver}, capacities as
 * {@code kubernetes.Quantity}; the Kubernetes semver and quantity functions, and {@code cel.bind}.
 *
 * <p>Not modelled: the rest of the Kubernetes CEL libraries (lists, regex, URLs, IP, CIDR, format), the optional types
 * extension, and a compile-time check of field names on {@code device} (a typo is a run-time error here, a compile error
 * there). Cost is counted as evaluated expression nodes, not in cel-go's units.
 *
 * <p>Everything here is bounded by {@link DraLimits}; no expression gets an exception out, only a {@link Outcome.Failed}
 * that names it.
 */
public final class DeviceSelectors {

    /** What a selector says of a device. */
    public sealed interface Outcome {

        record Matches(boolean value) implements Outcome {
        }

        /** The selector did not compile, ran out of budget or failed on this device: the reason says which. */
        record Failed(String reason) implements Outcome {
        }
    }

    private sealed interface Compiled {
    }

    private record Program(CelRuntime.Program program) implements Compiled {
    }

    private record Invalid(String reason) implements Compiled {
    }

    private static final OpaqueType SEMVER = OpaqueType.create("kubernetes.Semver");
    private static final OpaqueType QUANTITY = OpaqueType.create("kubernetes.Quantity");

    private final DraLimits limits;
    private final CelCompiler compiler;
    private final CelRuntime runtime;
    /** Compiled selectors, least recently used first; a few classes' selectors are evaluated over and over. */
    private final Map<String, Compiled> cache;

    public DeviceSelectors(DraLimits limits) {
        this.limits = limits;
        var options = CelOptions.current()
                .maxExpressionCodePointSize(limits.maxExpressionLength())
                .comprehensionMaxIterations(limits.maxComprehensionIterations())
                .build();
        this.compiler = CelCompilerFactory.standardCelCompilerBuilder()
                .setOptions(options)
                .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
                .addLibraries(CelExtensions.bindings())
                .addVar("device", MapType.create(SimpleType.STRING, SimpleType.DYN))
                .addFunctionDeclarations(declarations())
                .build();
        this.runtime = CelRuntimeFactory.standardCelRuntimeBuilder()
                .setOptions(options)
                .addFunctionBindings(KubernetesCelFunctions.bindings())
                .build();
        this.cache = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Compiled> eldest) {
                return size() > limits.maxCachedSelectors();
            }
        };
    }

    /** Why a selector cannot be used at all, or empty when it compiles to a bool. */
    public java.util.Optional<String> compileError(String expression) {
        return compiled(expression) instanceof Invalid invalid ? java.util.Optional.of(invalid.reason()) : java.util.Optional.empty();
    }

    /**
     * A device as selectors see it, built once for all the selectors evaluated on it; a version attribute that is not
     * one makes every selector fail on the device, as in kube-scheduler.
     */
    public static final class Input {
        private final Map<String, Object> variables;
        private final String error;

        private Input(Map<String, Object> variables, String error) {
            this.variables = variables;
            this.error = error;
        }
    }

    public static Input input(String driver, Device device) {
        try {
            return new Input(Map.of("device", deviceValue(driver, device)), null);
        } catch (IllegalArgumentException e) {
            return new Input(Map.of(), e.getMessage());
        }
    }

    /** The selector evaluated on one device of a driver. */
    public Outcome evaluate(String expression, String driver, Device device) {
        return evaluate(expression, input(driver, device));
    }

    /** The selector evaluated on a device already made {@link #input}. */
    public Outcome evaluate(String expression, Input device) {
        if (!(compiled(expression) instanceof Program program)) {
            return new Outcome.Failed(((Invalid) compiled(expression)).reason());
        }
        if (device.error != null) {
            return new Outcome.Failed(device.error);
        }
        var input = device.variables;
        var budget = new long[] {limits.maxSelectorCost()};
        Object result;
        try {
            result = program.program().trace(input, (expr, value) -> {
                if (--budget[0] < 0) {
                    throw new CostExceeded();
                }
            });
        } catch (CelEvaluationException | RuntimeException e) {
            // CEL wraps what its listener throws; a library function may fail in ways CEL does not catch.
            return costExceeded(e) ? new Outcome.Failed("CEL cost limit of " + limits.maxSelectorCost() + " exceeded")
                    : new Outcome.Failed("CEL runtime error: " + firstLine(String.valueOf(e.getMessage())));
        } catch (StackOverflowError e) {
            return new Outcome.Failed("CEL runtime error: expression nested too deeply");
        }
        if (result instanceof Boolean b) {
            return new Outcome.Matches(b);
        }
        return new Outcome.Failed("CEL result of type " + (result == null ? "null" : result.getClass().getSimpleName())
                + " could not be converted to bool");
    }

    private static boolean costExceeded(Throwable e) {
        for (var cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof CostExceeded) {
                return true;
            }
        }
        return false;
    }

    private synchronized Compiled compiled(String expression) {
        var known = cache.get(expression);
        if (known != null) {
            return known;
        }
        var fresh = compile(expression);
        cache.put(expression, fresh);
        return fresh;
    }

    private Compiled compile(String expression) {
        if (expression == null || expression.isBlank()) {
            return new Invalid("CEL expression empty");
        }
        if (expression.length() > limits.maxExpressionLength()) {
            return new Invalid("CEL expression of " + expression.length() + " characters, longer than the limit of "
                    + limits.maxExpressionLength());
        }
        try {
            CelAbstractSyntaxTree ast = compiler.compile(expression).getAst();
            var kind = ast.getResultType().kind();
            if (kind != CelKind.BOOL && kind != CelKind.DYN) {
                return new Invalid("CEL compile error: must evaluate to bool or the unknown type, not " + ast.getResultType().name());
            }
            return new Program(runtime.createProgram(ast));
        } catch (CelValidationException e) {
            return new Invalid("CEL compile error: " + firstLine(e.getMessage()));
        } catch (CelEvaluationException | RuntimeException | StackOverflowError e) {
            return new Invalid("CEL compile error: " + firstLine(String.valueOf(e.getMessage())));
        }
    }

    private static String firstLine(String message) {
        var newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    /** The {@code device} variable: attributes and capacities split into domain and id, the driver's domain by default. */
    private static Map<String, Object> deviceValue(String driver, Device device) {
        var attributes = new HashMap<String, Map<String, Object>>();
        for (var entry : device.attributes().entrySet()) {
            var name = QualifiedName.of(entry.getKey(), driver);
            attributes.computeIfAbsent(name.domain(), d -> new HashMap<>()).put(name.id(), celValue(entry.getKey(), entry.getValue()));
        }
        var capacity = new HashMap<String, Map<String, Object>>();
        for (var entry : device.capacity().entrySet()) {
            var name = QualifiedName.of(entry.getKey(), driver);
            capacity.computeIfAbsent(name.domain(), d -> new HashMap<>()).put(name.id(), entry.getValue());
        }
        return Map.of("driver", driver, "attributes", new EmptyByDefault(attributes), "capacity", new EmptyByDefault(capacity));
    }

    private static Object celValue(String name, DeviceAttribute attribute) {
        return switch (attribute) {
            case DeviceAttribute.StringValue s -> s.value();
            case DeviceAttribute.IntValue i -> i.value();
            case DeviceAttribute.BoolValue b -> b.value();
            case DeviceAttribute.VersionValue v -> Semver.parse(v.value()).orElseThrow(
                    () -> new IllegalArgumentException("attribute " + name + ": parse semantic version: " + v.value()));
        };
    }

    /**
     * A domain's map, and an empty one for any other domain: {@code device.attributes["other.example.com"]} is an empty
     * map rather than a missing key, as in kube-scheduler.
     */
    private static final class EmptyByDefault extends AbstractMap<String, Object> {
        private final Map<String, Map<String, Object>> domains;

        EmptyByDefault(Map<String, Map<String, Object>> domains) {
            this.domains = domains;
        }

        @Override
        public Set<Entry<String, Object>> entrySet() {
            @SuppressWarnings({"unchecked", "rawtypes"})
            Set<Entry<String, Object>> entries = (Set) domains.entrySet();
            return entries;
        }

        @Override
        public boolean containsKey(Object key) {
            return key instanceof String;
        }

        @Override
        public Object get(Object key) {
            var domain = domains.get(key);
            return domain == null ? Map.of() : domain;
        }
    }

    private static final class CostExceeded extends RuntimeException {
        CostExceeded() {
            super(null, null, false, false);
        }
    }

    private static List<CelFunctionDecl> declarations() {
        var string = SimpleType.STRING;
        var bool = SimpleType.BOOL;
        var integer = SimpleType.INT;
        return List.of(
                CelFunctionDecl.newFunctionDeclaration("semver",
                        CelOverloadDecl.newGlobalOverload("string_to_semver", SEMVER, string),
                        CelOverloadDecl.newGlobalOverload("string_bool_to_semver", SEMVER, string, bool)),
                CelFunctionDecl.newFunctionDeclaration("isSemver",
                        CelOverloadDecl.newGlobalOverload("is_semver_string", bool, string),
                        CelOverloadDecl.newGlobalOverload("is_semver_string_bool", bool, string, bool)),
                CelFunctionDecl.newFunctionDeclaration("major", CelOverloadDecl.newMemberOverload("semver_major", integer, SEMVER)),
                CelFunctionDecl.newFunctionDeclaration("minor", CelOverloadDecl.newMemberOverload("semver_minor", integer, SEMVER)),
                CelFunctionDecl.newFunctionDeclaration("patch", CelOverloadDecl.newMemberOverload("semver_patch", integer, SEMVER)),
                CelFunctionDecl.newFunctionDeclaration("quantity", CelOverloadDecl.newGlobalOverload("string_to_quantity", QUANTITY, string)),
                CelFunctionDecl.newFunctionDeclaration("isQuantity", CelOverloadDecl.newGlobalOverload("is_quantity_string", bool, string)),
                CelFunctionDecl.newFunctionDeclaration("sign", CelOverloadDecl.newMemberOverload("quantity_sign", integer, QUANTITY)),
                CelFunctionDecl.newFunctionDeclaration("isInteger", CelOverloadDecl.newMemberOverload("quantity_is_integer", bool, QUANTITY)),
                CelFunctionDecl.newFunctionDeclaration("asInteger", CelOverloadDecl.newMemberOverload("quantity_get_integer", integer, QUANTITY)),
                CelFunctionDecl.newFunctionDeclaration("asApproximateFloat",
                        CelOverloadDecl.newMemberOverload("quantity_get_float", SimpleType.DOUBLE, QUANTITY)),
                CelFunctionDecl.newFunctionDeclaration("add",
                        CelOverloadDecl.newMemberOverload("quantity_add", QUANTITY, QUANTITY, QUANTITY),
                        CelOverloadDecl.newMemberOverload("quantity_add_int", QUANTITY, QUANTITY, integer)),
                CelFunctionDecl.newFunctionDeclaration("sub",
                        CelOverloadDecl.newMemberOverload("quantity_sub", QUANTITY, QUANTITY, QUANTITY),
                        CelOverloadDecl.newMemberOverload("quantity_sub_int", QUANTITY, QUANTITY, integer)),
                CelFunctionDecl.newFunctionDeclaration("isGreaterThan",
                        CelOverloadDecl.newMemberOverload("semver_is_greater_than", bool, SEMVER, SEMVER),
                        CelOverloadDecl.newMemberOverload("quantity_is_greater_than", bool, QUANTITY, QUANTITY)),
                CelFunctionDecl.newFunctionDeclaration("isLessThan",
                        CelOverloadDecl.newMemberOverload("semver_is_less_than", bool, SEMVER, SEMVER),
                        CelOverloadDecl.newMemberOverload("quantity_is_less_than", bool, QUANTITY, QUANTITY)),
                CelFunctionDecl.newFunctionDeclaration("compareTo",
                        CelOverloadDecl.newMemberOverload("semver_compare_to", integer, SEMVER, SEMVER),
                        CelOverloadDecl.newMemberOverload("quantity_compare_to", integer, QUANTITY, QUANTITY)));
    }
}
