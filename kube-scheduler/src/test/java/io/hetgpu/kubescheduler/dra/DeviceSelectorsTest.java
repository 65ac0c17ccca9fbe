package io.hetgpu.kubescheduler.dra;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.kubescheduler.dra.DeviceSelectors.Outcome;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DeviceSelectorsTest {

    private final DeviceSelectors selectors = new DeviceSelectors(DraLimits.DEFAULTS);
    private final Device h100 = NvidiaSlices.h100(0, "pci0000:10");

    private Outcome on(String expression, Device device) {
        return selectors.evaluate(expression, NvidiaSlices.DRIVER, device);
    }

    private Outcome onH100(String expression) {
        return on(expression, h100);
    }

    @ParameterizedTest(name = "{0} is {1}")
    @CsvSource(delimiter = '|', value = {
        "device.driver == 'gpu.nvidia.com'|true",
        "device.driver == 'neuron.amazonaws.com'|false",
        "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'|true",
        "device.attributes['gpu.nvidia.com'].architecture == 'Ampere'|false",
        "device.attributes['gpu.nvidia.com'].index >= 0|true",
        "device.attributes['gpu.nvidia.com'].index > 3|false",
        "device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('8.0.0'))|true",
        "device.attributes['gpu.nvidia.com'].cudaComputeCapability.isLessThan(semver('8.0.0'))|false",
        "device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('9.0.0')) == 0|true",
        "device.attributes['gpu.nvidia.com'].cudaComputeCapability.major() == 9|true",
        "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))|true",
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0|true",
        "device.capacity['gpu.nvidia.com'].memory.isLessThan(quantity('80Gi'))|false",
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('85899345920')) == 0|true",
        "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('90G'))|false",
        "device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:10'|true",
        "has(device.attributes['gpu.nvidia.com'].productName)|true",
        "has(device.attributes['gpu.nvidia.com'].migProfile)|false",
        "has(device.attributes['dra.example.com'].anything)|false",
        "cel.bind(gpu, device.attributes['gpu.nvidia.com'], gpu.brand == 'Nvidia' && gpu.type == 'gpu')|true",
        "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H')|true",
        "semver('v9.0', true).compareTo(semver('9.0.0')) == 0|true",
        "isSemver('9.0')|false",
        "isQuantity('80Gi') && !isQuantity('eighty')|true",
        "quantity('1Ki').add(1).compareTo(quantity('1025')) == 0|true",
    })
    void nvidiaShapedSelectorsEvaluateAsOnTheApiServer(String expression, boolean expected) {
        assertThat(onH100(expression)).isEqualTo(new Outcome.Matches(expected));
    }

    @Test
    void aMissingAttributeIsARuntimeErrorThatNamesTheKey() {
        assertThat(onH100("device.attributes['gpu.nvidia.com'].migProfile == '1g.10gb'"))
                .isInstanceOfSatisfying(Outcome.Failed.class, f -> assertThat(f.reason()).contains("CEL runtime error").contains("migProfile"));
    }

    @Test
    void aSelectorThatDoesNotCompileGivesAReasonNotAnException() {
        assertThat(onH100("device.attributes['gpu.nvidia.com'].productName ==")).isInstanceOfSatisfying(Outcome.Failed.class,
                f -> assertThat(f.reason()).startsWith("CEL compile error"));
        assertThat(onH100("nosuchfunction(device)")).isInstanceOf(Outcome.Failed.class);
        assertThat(selectors.compileError("device.driver == 'x'")).isEmpty();
        assertThat(selectors.compileError(")(")).isPresent();
    }

    @Test
    void aSelectorThatIsNotBooleanIsRefusedAtCompileTime() {
        assertThat(selectors.compileError("1 + 1")).hasValueSatisfying(r -> assertThat(r).contains("must evaluate to bool"));
        assertThat(selectors.compileError("'a string'")).isPresent();
    }

    @Test
    void aDynamicResultThatIsNotBooleanFailsOnTheDevice() {
        assertThat(onH100("device.attributes['gpu.nvidia.com'].productName")).isInstanceOfSatisfying(Outcome.Failed.class,
                f -> assertThat(f.reason()).contains("could not be converted to bool"));
    }

    @Test
    void anEmptyOrOverlongSelectorIsRefused() {
        assertThat(selectors.compileError("")).hasValue("CEL expression empty");
        var limits = new DraLimits(40, 1000, 100, 8, 32, 8, 1000, 16);
        var small = new DeviceSelectors(limits);
        assertThat(small.compileError("device.driver == '" + "x".repeat(40) + "'")).hasValueSatisfying(r -> assertThat(r).contains("longer than the limit of 40"));
    }

    @Test
    void aSelectorThatCostsTooMuchIsStoppedByTheConfiguredCost() {
        var limits = DraLimits.DEFAULTS.withMaxSelectorCost(50);
        var cheap = new DeviceSelectors(limits);
        var expensive = "[1,2,3,4,5,6,7,8,9,10].all(x, [1,2,3,4,5,6,7,8,9,10].all(y, x * y > 0))";
        assertThat(cheap.evaluate(expensive, NvidiaSlices.DRIVER, h100)).isInstanceOfSatisfying(Outcome.Failed.class,
                f -> assertThat(f.reason()).isEqualTo("CEL cost limit of 50 exceeded"));
        assertThat(selectors.evaluate(expensive, NvidiaSlices.DRIVER, h100)).isEqualTo(new Outcome.Matches(true));
    }

    @Test
    void comprehensionsAreBoundedByTheConfiguredIterations() {
        var limits = new DraLimits(10 * 1024, 1_000_000, 20, 8, 32, 8, 1000, 16);
        var bounded = new DeviceSelectors(limits);
        assertThat(bounded.evaluate("[1,2,3,4,5,6,7,8,9,10].all(x, [1,2,3,4,5,6,7,8,9,10].all(y, x > 0))", NvidiaSlices.DRIVER, h100))
                .isInstanceOf(Outcome.Failed.class);
    }

    @Test
    void aVersionAttributeThatIsNotSemverFailsOnlyTheSelectorThatMeetsIt() {
        var odd = new Device("gpu-9", Map.of("cudaComputeCapability", new DeviceAttribute.VersionValue("9.0")), Map.of());
        assertThat(on("device.driver == 'gpu.nvidia.com'", odd)).isInstanceOfSatisfying(Outcome.Failed.class,
                f -> assertThat(f.reason()).contains("cudaComputeCapability").contains("semantic version"));
    }

    @Test
    void aBadArgumentToALibraryFunctionIsARuntimeError() {
        assertThat(onH100("semver('nine').major() == 9")).isInstanceOfSatisfying(Outcome.Failed.class,
                f -> assertThat(f.reason()).contains("not a semantic version"));
        assertThat(onH100("quantity('lots').sign() == 1")).isInstanceOf(Outcome.Failed.class);
        assertThat(onH100("quantity('1.5').asInteger() == 1")).isInstanceOf(Outcome.Failed.class);
    }

    @Test
    void attributesWithoutADomainBelongToTheDriver() {
        var device = new Device("d", Map.of("model", new DeviceAttribute.StringValue("x"),
                "other.example.com/model", new DeviceAttribute.StringValue("y")), Map.of());
        assertThat(selectors.evaluate("device.attributes['dra.example.com'].model == 'x' && device.attributes['other.example.com'].model == 'y'",
                "dra.example.com", device)).isEqualTo(new Outcome.Matches(true));
    }

    @Test
    void compiledSelectorsAreCachedWithinTheConfiguredBound() {
        var limits = new DraLimits(10 * 1024, 1000, 100, 8, 32, 8, 1000, 2);
        var few = new DeviceSelectors(limits);
        for (int i = 0; i < 10; i++) {
            assertThat(few.evaluate("device.attributes['gpu.nvidia.com'].index == " + i, NvidiaSlices.DRIVER, h100))
                    .isEqualTo(new Outcome.Matches(i == 0));
        }
    }

    @Test
    void deeplyNestedInputIsRefusedNotThrown() {
        var nested = "(".repeat(5000) + "true" + ")".repeat(5000);
        assertThat(onH100(nested)).isInstanceOf(Outcome.Failed.class);
    }
}
