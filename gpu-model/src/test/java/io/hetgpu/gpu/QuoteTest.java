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
        assertThat(Quote.of("a\nFAKE LOG LINE")).isEqualTo("\"a\\nFAKE LOG LINE\"");
        assertThat(Quote.cut("x\u0000y")).isEqualTo("x\\x00y");
    }

    @Test
    void controlCharactersAreShownEscapedNotSentToTheTerminal() {
        assertThat(Quote.escaped("\u001b[2J\u001b]0;title\u0007")).isEqualTo("\\e[2J\\e]0;title\\x07");
        assertThat(Quote.escaped("a\rb\nc\td")).isEqualTo("a\\rb\\nc\\td");
        assertThat(Quote.escaped("del\u007f")).isEqualTo("del\\x7f");
        assertThat(Quote.escaped("csi\u009b2J nel\u0085")).isEqualTo("csi\\x9b2J nel\\x85");
        assertThat(Quote.escaped("file\u202egpj.exe \u2066x\u2069 \u200f")).isEqualTo("file\\u202egpj.exe \\u2066x\\u2069 \\u200f");
        assertThat(Quote.escaped("line\u2028sep")).isEqualTo("line\\u2028sep");
        assertThat(Quote.escaped(null)).isEqualTo("null");
    }

    @Test
    void ordinaryNonAsciiIsLeftAlone() {
        var text = "résumé-日本語-😀-Ωμέγα \\ back";
        assertThat(Quote.escaped(text)).isEqualTo(text);
        assertThat(Quote.of(text)).isEqualTo("\"" + text + "\"");
    }

    @Test
    void theCutCountsCharactersAsPrintedAndNeverHalvesAnEscape() {
        var quoted = Quote.of("a".repeat(63) + "\u001b[2J");
        assertThat(quoted).isEqualTo("\"" + "a".repeat(63) + "…\"(67 bytes)");
        assertThat(Quote.cut("\u001b".repeat(40))).isEqualTo("\\e".repeat(32) + "…(40 bytes)");
        assertThat(Quote.escaped("x".repeat(1000) + "\n")).hasSize(1002);
    }
}
