package io.hetgpu.testcluster.docs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class GithubSluggerTest {

    @Test
    void slugsAsGithubDoes() {
        var slugger = new GithubSlugger();
        assertThat(slugger.slug("Card tiers")).isEqualTo("card-tiers");
        assertThat(slugger.slug("Which job a pod belongs to")).isEqualTo("which-job-a-pod-belongs-to");
        assertThat(slugger.slug("What's new? (0.2.0)")).isEqualTo("whats-new-020");
        assertThat(slugger.slug("hetgpu.io/gpu-class & NVLink")).isEqualTo("hetgpuiogpu-class--nvlink");
        assertThat(slugger.slug("A — B")).isEqualTo("a--b");
        assertThat(slugger.slug("snake_case Über")).isEqualTo("snake_case-über");
    }

    @Test
    void aRepeatedHeadingGetsANumber() {
        var slugger = new GithubSlugger();
        assertThat(slugger.slug("Setup")).isEqualTo("setup");
        assertThat(slugger.slug("Setup")).isEqualTo("setup-1");
        assertThat(slugger.slug("Setup")).isEqualTo("setup-2");
        assertThat(slugger.slug("Setup-1")).isEqualTo("setup-1-1");
    }
}
