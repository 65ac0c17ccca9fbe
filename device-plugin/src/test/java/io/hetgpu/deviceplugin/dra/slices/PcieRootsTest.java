package io.hetgpu.deviceplugin.dra.slices;

import static org.assertj.core.api.Assertions.assertThat;

import io.hetgpu.gpu.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** sysfs as a temporary tree of the same links the kernel makes. */
class PcieRootsTest {

    @TempDir
    Path sysfs;

    private void link(String busId, String target) throws Exception {
        var devices = Files.createDirectories(sysfs.resolve("bus/pci/devices"));
        Files.createSymbolicLink(devices.resolve(busId), Path.of(target));
    }

    @Test
    void theRootIsTheFirstDirectoryOfTheDevicesPathWhateverBridgesLieBetween() throws Exception {
        var dgx1 = Fixtures.dgx1V100();
        var first = dgx1.device(0).pciBusId().toLowerCase();
        var second = dgx1.device(1).pciBusId().toLowerCase();
        link(first, "../../../devices/pci0000:00/0000:00:02.0/0000:03:00.0/0000:04:10.0/" + first);
        link(second, "../../../devices/pci0000:80/0000:80:01.0/" + second);

        assertThat(PcieRoots.of(dgx1, sysfs)).isEqualTo(Map.of(0, "pci0000:00", 1, "pci0000:80"));
    }

    @Test
    void aMissingOrStrayLinkGivesNoAttributeAndNoError() throws Exception {
        link("0000:06:00.0", "../../../somewhere/pci0000:00/0000:06:00.0");
        link("0000:07:00.0", "../../../devices/pci0000:00/0000:99:00.0");
        assertThat(PcieRoots.rootOf("0000:06:00.0", sysfs)).isEmpty();
        assertThat(PcieRoots.rootOf("0000:07:00.0", sysfs)).isEmpty();
        assertThat(PcieRoots.rootOf("0000:0a:00.0", sysfs)).isEmpty();
        assertThat(PcieRoots.rootOf("../../etc", sysfs)).isEmpty();
        assertThat(PcieRoots.of(Fixtures.dgx1V100(), sysfs.resolve("absent"))).isEmpty();
    }

    @Test
    void anUpperCaseBusIdFindsItsLowerCaseSysfsName() throws Exception {
        link("0000:0a:00.0", "../../../devices/pci0000:00/0000:00:03.0/0000:0a:00.0");
        assertThat(PcieRoots.rootOf("0000:0A:00.0", sysfs)).contains("pci0000:00");
    }
}
