package io.hetgpu.deviceplugin.kubelet;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileSystemException;

import static org.assertj.core.api.Assertions.assertThat;

class FailureCauseTest {

    @Test
    void namesTheWrappedReasonAGrpcBindFailureHides() {
        var bind = new IOException("Failed to bind to address /dp/hetgpu.sock",
                new IOException("bind(..) failed: Read-only file system"));

        assertThat(FailureCause.of(bind)).isEqualTo("Failed to bind to address /dp/hetgpu.sock: bind(..) failed: Read-only file system");
    }

    @Test
    void namesTheReasonTheJdkKeepsInTheExceptionType() {
        assertThat(FailureCause.of(new AccessDeniedException("/dp/hetgpu.sock"))).isEqualTo("/dp/hetgpu.sock (access denied)");
        assertThat(FailureCause.of(new DirectoryNotEmptyException("/dp/hetgpu.sock"))).isEqualTo("/dp/hetgpu.sock (directory not empty)");
        assertThat(FailureCause.of(new FileSystemException("/dp/hetgpu.sock", null, "Read-only file system")))
                .isEqualTo("/dp/hetgpu.sock: Read-only file system");
    }

    @Test
    void saysARepeatedMessageOnceAndNamesAMessagelessFailureByItsType() {
        var inner = new IllegalStateException("closed");
        assertThat(FailureCause.of(new RuntimeException(inner))).isEqualTo("java.lang.IllegalStateException: closed");
        assertThat(FailureCause.of(new NullPointerException())).isEqualTo("null pointer");
    }
}
