package io.hetgpu.gpu;

import java.util.regex.Pattern;

/** How one GPU reaches another: NVLink (with its number of links) or a PCIe path. */
public sealed interface GpuLink permits GpuLink.Nvlink, GpuLink.Pcie {

    /** Points per NVLink link on the scale of {@link PcieRelation#score()}. */
    int NVLINK_SCORE_PER_LINK = 100;

    /** The pair score used to rank GPU sets: higher is better connected. */
    int score();

    /** A short token: {@code NV2}, {@code NVS12} (through an NVSwitch fabric), {@code PIX}, {@code SYS}… */
    String token();

    default boolean isNvlink() {
        return this instanceof Nvlink;
    }

    /**
     * NVLink between the two GPUs.
     *
     * @param links      number of links (per direction) joining them; on an NVSwitch fabric, the links each GPU has into the fabric
     * @param viaNvswitch true when the GPUs reach each other through NVSwitches rather than direct links
     */
    record Nvlink(int links, boolean viaNvswitch) implements GpuLink {
        public Nvlink {
            if (links < 1) {
                throw new IllegalArgumentException("an NVLink connection has at least one link, got " + links);
            }
        }

        @Override
        public int score() {
            return NVLINK_SCORE_PER_LINK * links;
        }

        @Override
        public String token() {
            return (viaNvswitch ? "NVS" : "NV") + links;
        }
    }

    record Pcie(PcieRelation relation) implements GpuLink {
        public Pcie {
            if (relation == null) {
                throw new IllegalArgumentException("relation must not be null");
            }
        }

        @Override
        public int score() {
            return relation.score();
        }

        @Override
        public String token() {
            return relation.token();
        }
    }

    Pattern NVLINK_TOKEN = Pattern.compile("(NVS?)(\\d{1,3})");

    /** Parses a token written by {@link #token()}; throws {@link IllegalArgumentException} quoting it otherwise. */
    static GpuLink parse(String token) {
        var nvlink = NVLINK_TOKEN.matcher(token == null ? "" : token);
        if (nvlink.matches()) {
            return new Nvlink(Integer.parseInt(nvlink.group(2)), nvlink.group(1).equals("NVS"));
        }
        return new Pcie(PcieRelation.fromToken(token));
    }
}
