package io.hetgpu.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class QuoteTest {

    @Test
    void shortValuesAreQuotedWhole() {
        assertThat(Quote.of("A100,H100")).isEqualTo("\"A100,H100\"");
        assertThat(Quote.of("x".repeat(64))).isEqualTo("\"" + "x".repeat(64) + "\"");
        assertThat(Quote.of(null)).isEqualTo("null");
    }

    @Test
    void longValuesAreCutAndSayHowLongTheyWere() {
        var quoted = Quote.of("y".repeat(250_000));
        assertThat(quoted).isEqualTo("\"" + "y".repeat(64) + "…\"(250000 bytes)");
        assertThat(Quote.cut("z".repeat(65))).isEqualTo("z".repeat(64) + "…(65 bytes)");
    }

    @Test
    void lengthIsInUtf8BytesAndNoSurrogatePairIsHalved() {
        var text = "a".repeat(63) + "😀".repeat(10);
        var quoted = Quote.of(text);
        assertThat(quoted).startsWith("\"" + "a".repeat(63) + "…\"").endsWith("(" + (63 + 40) + " bytes)");
        assertThat(Quote.of("é".repeat(100))).endsWith("(200 bytes)");
    }

    @Test
    void controlCharactersCannotStartALineOfTheirOwn() {
        assertThat(Quote.of("a\nFAKE LOG LINE")).isEqualTo("\"a?FAKE LOG LINE\"");
        assertThat(Quote.cut("x\u0000y")).isEqualTo("x?y");
    }
}
