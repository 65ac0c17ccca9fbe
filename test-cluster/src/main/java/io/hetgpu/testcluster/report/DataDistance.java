package io.hetgpu.testcluster.report;

/** How far a pod runs from the volume holding its training data. */
public enum DataDistance {
    SAME_NODE("same node"), SAME_RACK("same rack"), SAME_ZONE("same zone"), OTHER_ZONE("other zone"), NO_DATA("-");

    private final String text;

    DataDistance(String text) {
        this.text = text;
    }

    public String text() {
        return text;
    }
}
