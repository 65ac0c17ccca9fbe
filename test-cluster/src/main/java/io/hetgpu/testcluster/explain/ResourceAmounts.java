package io.hetgpu.testcluster.explain;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The resource amounts of an object given with {@code -f}, checked as the API server checks them before it stores the
 * object: each a quantity (2, 500m, 16Gi) and none negative; an extended resource such as {@code nvidia.com/gpu} a whole
 * number, its request equal to its limit where a container names both. explain places what a cluster would hold, and
 * a pod the API server refuses never reaches a scheduler; placed anyway, "two" GPUs would be a parse error with no
 * field to it.
 *
 * <p>Amounts are the maps {@code resources.requests} and {@code resources.limits} (containers', claims'), a pod's
 * {@code overhead} and a volume's {@code capacity}, wherever they stand in the object (a Job's pod template, a
 * training job's replica specs).
 */
final class ResourceAmounts {

    /** Kubernetes' grammar for a quantity (apimachinery's {@code resource.ParseQuantity}): a signed decimal, one suffix. */
    private static final Pattern QUANTITY = Pattern.compile("([+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+))([KMGTPE]i|[mkMGTPE]|[eE][+-]?[0-9]+)?");
    private static final Map<String, Integer> DECIMAL_EXPONENTS = Map.of("m", -3, "k", 3, "M", 6, "G", 9, "T", 12, "P", 15, "E", 18);
    private static final String EXAMPLES = "(such as 2, 500m or 16Gi)";

    private ResourceAmounts() {
    }

    /**
     * @param where names the object in a message: "job.yaml: Job bert"
     * @throws WorkloadFiles.BadInput naming the first amount the API server would refuse, its field and its value
     */
    static void check(String where, JsonNode object) throws WorkloadFiles.BadInput {
        walk(where, object, "", "");
    }

    private static void walk(String where, JsonNode node, String path, String key) throws WorkloadFiles.BadInput {
        if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                walk(where, node.get(i), path + "[" + i + "]", key);
            }
            return;
        }
        if (!node.isObject()) {
            return;
        }
        var fields = node.fields();
        while (fields.hasNext()) {
            var field = fields.next();
            var name = field.getKey();
            var at = path.isEmpty() ? name : path + "." + name;
            var amounts = key.equals("resources") && (name.equals("requests") || name.equals("limits"))
                    || key.equals("spec") && (name.equals("overhead") || name.equals("capacity"));
            if (amounts && field.getValue().isObject()) {
                checkAmounts(where, field.getValue(), at);
            } else {
                walk(where, field.getValue(), at, name);
            }
        }
        if (key.equals("resources")) {
            checkExtendedRequestsEqualLimits(where, node, path);
        }
    }

    private static void checkAmounts(String where, JsonNode amounts, String path) throws WorkloadFiles.BadInput {
        var entries = amounts.fields();
        while (entries.hasNext()) {
            var entry = entries.next();
            var field = path + "[" + entry.getKey() + "]";
            var text = entry.getValue().isValueNode() ? entry.getValue().asText() : entry.getValue().toString();
            var value = parse(text);
            if (value == null) {
                throw refused(where, field, text, "is not a quantity " + EXAMPLES);
            }
            if (value.signum() < 0) {
                throw refused(where, field, text, "must be 0 or more");
            }
            if (extended(entry.getKey()) && value.stripTrailingZeros().scale() > 0) {
                throw refused(where, field, text, "must be a whole number: " + entry.getKey() + " is counted in whole devices");
            }
        }
    }

    /** The API server's rule for extended resources: they cannot be overcommitted, so a request is its limit. */
    private static void checkExtendedRequestsEqualLimits(String where, JsonNode resources, String path) throws WorkloadFiles.BadInput {
        var requests = resources.path("requests");
        var limits = resources.path("limits");
        var names = requests.fieldNames();
        while (names.hasNext()) {
            var name = names.next();
            if (!extended(name) || !limits.has(name)) {
                continue;
            }
            var request = requests.get(name).asText();
            var limit = limits.get(name).asText();
            if (parse(request).compareTo(parse(limit)) != 0) {
                throw refused(where, path + ".requests[" + name + "]", request, "must equal its limit, " + limit
                        + ": an extended resource is not overcommitted");
            }
        }
    }

    /** Extended resources, as the API server tells them: a domain-qualified name outside kubernetes.io's. */
    private static boolean extended(String resource) {
        var slash = resource.indexOf('/');
        if (slash < 0) {
            return false;
        }
        var domain = resource.substring(0, slash);
        return !domain.equals("kubernetes.io") && !domain.endsWith(".kubernetes.io");
    }

    /** The amount a quantity stands for, or null when it is not one. */
    static BigDecimal parse(String text) {
        var matcher = QUANTITY.matcher(text);
        if (!matcher.matches()) {
            return null;
        }
        var number = new BigDecimal(matcher.group(1).startsWith("+") ? matcher.group(1).substring(1) : matcher.group(1));
        var suffix = matcher.group(2);
        if (suffix == null) {
            return number;
        }
        if (suffix.endsWith("i")) {
            var power = "KMGTPE".indexOf(suffix.charAt(0)) + 1;
            return number.multiply(BigDecimal.valueOf(1024).pow(power));
        }
        if (suffix.length() == 1) {
            return number.scaleByPowerOfTen(DECIMAL_EXPONENTS.get(suffix));
        }
        try {
            return number.scaleByPowerOfTen(Integer.parseInt(suffix.substring(1))); // 1e3
        } catch (NumberFormatException e) {
            return null; // an exponent beyond any amount
        }
    }

    private static WorkloadFiles.BadInput refused(String where, String field, String value, String why) {
        return new WorkloadFiles.BadInput(where + ": " + field + ": \"" + value + "\" " + why + ", as the API server would refuse it");
    }
}
