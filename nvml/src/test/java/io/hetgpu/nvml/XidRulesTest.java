package io.hetgpu.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class XidRulesTest {

    private final XidRules defaults = XidRules.defaults();

    @Test
    void theApplicationClassIsExactlyNvidiaPluginsSkipList() {
        // internal/rm/health.go in NVIDIA/k8s-device-plugin: 13, 31, 43, 45, 68, 109.
        assertThat(XidCatalogue.nvidia().entries().values()).filteredOn(e -> e.xidClass() == XidClass.APPLICATION)
                .extracting(XidCatalogue.Entry::xid).containsExactlyInAnyOrder(13L, 31L, 43L, 45L, 68L, 109L);
    }

    @Test
    void eachXidTheIssueNamesIsInItsClass() {
        for (long xid : new long[] {48, 63, 64, 74, 92, 94, 95, 119, 120}) {
            assertThat(defaults.classify(xid)).as("XID %d", xid).isEqualTo(XidClass.RESET_REQUIRED);
        }
        assertThat(defaults.classify(79)).isEqualTo(XidClass.REBOOT_REQUIRED);
        assertThat(defaults.classify(8)).isEqualTo(XidClass.TRANSIENT);
        assertThat(defaults.classify(32)).isEqualTo(XidClass.TRANSIENT);
        assertThat(defaults.classifyDoubleBitEcc()).isEqualTo(XidClass.RESET_REQUIRED);
        assertThat(defaults.classify(100_000)).as("unknown").isEqualTo(XidClass.RESET_REQUIRED);
    }

    @Test
    void criticalWinsOverSkippedAsInNvidiasPlugin() {
        var rules = new XidRules(XidCatalogue.nvidia(), XidSelection.of(79), XidSelection.of(79));

        assertThat(rules.classify(79)).isEqualTo(XidClass.REBOOT_REQUIRED);
    }

    @Test
    void selectionsParseLikeNvidiasEnvironmentVariables() {
        assertThat(XidSelection.parse("")).isEqualTo(XidSelection.NONE);
        assertThat(XidSelection.parse(" 68 , 67,")).isEqualTo(XidSelection.of(67, 68));
        assertThat(XidSelection.parse("ALL")).isEqualTo(XidSelection.ALL);
        assertThat(XidSelection.parse("13,xids")).isEqualTo(XidSelection.ALL);
        assertThat(XidSelection.of(79, 13)).hasToString("13,79");
    }

    @Test
    void aSelectionThatIsNotXidsIsRejectedNamingTheEntry() {
        assertThatThrownBy(() -> XidSelection.parse("68,not-an-int"))
                .hasMessage("expected XID numbers separated by commas, or all; \"not-an-int\" is not an XID (in \"68,not-an-int\")");
        assertThatThrownBy(() -> XidSelection.parse("-68")).hasMessageContaining("\"-68\" is not an XID");
        assertThatThrownBy(() -> XidSelection.parse("0")).hasMessageContaining("\"0\" is not an XID");
    }
}
