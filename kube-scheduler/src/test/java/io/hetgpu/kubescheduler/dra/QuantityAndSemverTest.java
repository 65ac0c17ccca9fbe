package io.hetgpu.kubescheduler.dra;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class QuantityAndSemverTest {

    @ParameterizedTest(name = "{0} = {1}")
    @CsvSource({"80Gi,85899345920", "1Ki,1024", "1500m,1.5", "1k,1000", "1e3,1000", "2E-3,0.002", "0.5Mi,524288", "+7,7", "-1,-1", "100n,0.0000001"})
    void quantitiesParseToTheirAmounts(String text, String amount) {
        assertThat(Quantity.parse(text)).hasValueSatisfying(q -> assertThat(q.amount()).isEqualByComparingTo(new BigDecimal(amount)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "Gi", "eighty", "1GiB", "1 Gi", ".", "1e999999999", "1.2.3"})
    void notQuantities(String text) {
        assertThat(Quantity.parse(text)).isEmpty();
    }

    @Test
    void anOverlongQuantityIsRefusedBeforeParsing() {
        assertThat(Quantity.parse("9".repeat(Quantity.MAX_LENGTH + 1))).isEmpty();
    }

    @Test
    void quantitiesCompareByAmount() {
        assertThat(Quantity.parse("1Ki").orElseThrow()).isEqualTo(Quantity.of(1024));
        assertThat(Quantity.parse("40Gi").orElseThrow().compareTo(Quantity.parse("42G").orElseThrow())).isPositive();
    }

    @ParameterizedTest(name = "{0} vs {1} = {2}")
    @CsvSource({"9.0.0,8.0.0,1", "8.6.0,8.9.0,-1", "1.0.0,1.0.0,0", "1.0.0-alpha,1.0.0,-1", "1.0.0-alpha.1,1.0.0-alpha,1",
        "1.0.0-alpha.beta,1.0.0-alpha.1,1", "1.0.0-2,1.0.0-10,-1", "1.0.0+build,1.0.0,0", "10.0.0,9.0.0,1"})
    void versionsCompareAsSemverSays(String a, String b, int expected) {
        assertThat(Semver.parse(a).orElseThrow().compareTo(Semver.parse(b).orElseThrow())).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"9.0", "v9.0.0", "09.0.0", "9.0.0-", "9.0.0-01", "9.0.0+", "a.b.c", "", "9..0"})
    void strictParsingRefuses(String text) {
        assertThat(Semver.parse(text)).isEmpty();
    }

    @Test
    void normalizedParsingAcceptsWhatKubernetesNormalizes() {
        assertThat(Semver.parseNormalized("v9.0")).contains(new Semver(9, 0, 0, java.util.List.of()));
        assertThat(Semver.parseNormalized("01.02.03")).contains(new Semver(1, 2, 3, java.util.List.of()));
        assertThat(Semver.parseNormalized("9-rc")).isEmpty();
    }
}
