package io.hetgpu.kubescheduler.dra;

import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime.CelFunctionBinding;
import java.math.BigDecimal;
import java.util.List;

/**
 * The implementations of the Kubernetes CEL library functions a device selector may call
 * (k8s.io/apiserver/pkg/cel/library: semverlib.go and quantity.go), over {@link Semver} and {@link Quantity}.
 */
final class KubernetesCelFunctions {

    private KubernetesCelFunctions() {
    }

    static List<CelFunctionBinding> bindings() {
        return List.of(
                CelFunctionBinding.from("string_to_semver", String.class, KubernetesCelFunctions::semver),
                CelFunctionBinding.from("string_bool_to_semver", String.class, Boolean.class,
                        (s, normalize) -> normalize ? Semver.parseNormalized(s).orElseThrow(() -> notSemver(s)) : semver(s)),
                CelFunctionBinding.from("is_semver_string", String.class, s -> Semver.parse(s).isPresent()),
                CelFunctionBinding.from("is_semver_string_bool", String.class, Boolean.class,
                        (s, normalize) -> (normalize ? Semver.parseNormalized(s) : Semver.parse(s)).isPresent()),
                CelFunctionBinding.from("semver_major", Semver.class, Semver::major),
                CelFunctionBinding.from("semver_minor", Semver.class, Semver::minor),
                CelFunctionBinding.from("semver_patch", Semver.class, Semver::patch),
                CelFunctionBinding.from("semver_is_greater_than", Semver.class, Semver.class, (a, b) -> a.compareTo(b) > 0),
                CelFunctionBinding.from("semver_is_less_than", Semver.class, Semver.class, (a, b) -> a.compareTo(b) < 0),
                CelFunctionBinding.from("semver_compare_to", Semver.class, Semver.class, (a, b) -> (long) a.compareTo(b)),
                CelFunctionBinding.from("string_to_quantity", String.class, KubernetesCelFunctions::quantity),
                CelFunctionBinding.from("is_quantity_string", String.class, s -> Quantity.parse(s).isPresent()),
                CelFunctionBinding.from("quantity_sign", Quantity.class, q -> (long) q.amount().signum()),
                CelFunctionBinding.from("quantity_is_integer", Quantity.class, KubernetesCelFunctions::isLong),
                CelFunctionBinding.from("quantity_get_integer", Quantity.class, q -> {
                    if (!isLong(q)) {
                        throw new IllegalArgumentException("cannot convert value to integer: " + q);
                    }
                    return q.amount().longValueExact();
                }),
                CelFunctionBinding.from("quantity_get_float", Quantity.class, q -> q.amount().doubleValue()),
                CelFunctionBinding.from("quantity_add", Quantity.class, Quantity.class, (a, b) -> new Quantity(a.amount().add(b.amount()))),
                CelFunctionBinding.from("quantity_add_int", Quantity.class, Long.class,
                        (a, b) -> new Quantity(a.amount().add(BigDecimal.valueOf(b)))),
                CelFunctionBinding.from("quantity_sub", Quantity.class, Quantity.class,
                        (a, b) -> new Quantity(a.amount().subtract(b.amount()))),
                CelFunctionBinding.from("quantity_sub_int", Quantity.class, Long.class,
                        (a, b) -> new Quantity(a.amount().subtract(BigDecimal.valueOf(b)))),
                CelFunctionBinding.from("quantity_is_greater_than", Quantity.class, Quantity.class, (a, b) -> a.compareTo(b) > 0),
                CelFunctionBinding.from("quantity_is_less_than", Quantity.class, Quantity.class, (a, b) -> a.compareTo(b) < 0),
                CelFunctionBinding.from("quantity_compare_to", Quantity.class, Quantity.class, (a, b) -> (long) a.compareTo(b)));
    }

    private static Semver semver(String s) throws CelEvaluationException {
        return Semver.parse(s).orElseThrow(() -> notSemver(s));
    }

    private static CelEvaluationException notSemver(String s) {
        return new CelEvaluationException("not a semantic version: " + Quotes.quote(s));
    }

    private static Quantity quantity(String s) throws CelEvaluationException {
        return Quantity.parse(s).orElseThrow(() -> new CelEvaluationException("not a quantity: " + Quotes.quote(s)));
    }

    private static boolean isLong(Quantity q) {
        var amount = q.amount();
        return amount.signum() == 0 || (amount.scale() <= 0 && amount.precision() - amount.scale() <= 18);
    }
}
