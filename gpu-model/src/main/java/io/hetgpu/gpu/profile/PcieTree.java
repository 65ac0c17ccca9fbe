package io.hetgpu.gpu.profile;

import io.hetgpu.gpu.PcieRelation;
import java.util.ArrayList;
import java.util.List;

/**
 * The PCIe tree of a profile: CPU sockets at the top, then host bridges, PCIe switches (nested as
 * deep as the machine has them) and multi-GPU boards, with GPU indices as leaves. Two GPUs are
 * related by the closest element they share, the way {@code nvidia-smi topo -m} reports it:
 *
 * <ul>
 *   <li>a board: {@code BRD} (the two GPUs of a K80);</li>
 *   <li>a switch: {@code PIX} when both GPUs sit directly in that switch's list, {@code PXB} when either
 *       sits deeper (in a nested switch or on a board, i.e. more than one bridge between them);</li>
 *   <li>a host bridge: {@code PHB};</li>
 *   <li>a socket: {@code NODE} (different host bridges of one CPU);</li>
 *   <li>nothing (different sockets): {@code SYS}.</li>
 * </ul>
 */
final class PcieTree {

    enum Kind {
        SOCKET("socket"), HOST_BRIDGE("hostBridge"), SWITCH("switch"), BOARD("board");

        final String key;

        Kind(String key) {
            this.key = key;
        }

        /** Where each kind may appear: sockets only at the top, nothing above a socket inside a switch, and so on. */
        boolean mayContain(Kind child) {
            return switch (this) {
                case SOCKET -> child != SOCKET;
                case HOST_BRIDGE -> child == SWITCH || child == BOARD;
                case SWITCH -> child == SWITCH || child == BOARD;
                case BOARD -> false;
            };
        }
    }

    /** One element on a GPU's path from the top of the tree; {@code id} tells equal kinds apart. */
    private record Ancestor(int id, Kind kind) {
    }

    /** For each GPU, its ancestors from the socket down to its direct parent. */
    private final List<List<Ancestor>> paths;

    private PcieTree(List<List<Ancestor>> paths) {
        this.paths = paths;
    }

    /** Reads the {@code field} list of {@code links}, which must place each of {@code gpus} GPUs exactly once. */
    static PcieTree read(ProfileFields links, String field, int gpus) throws ProfileFormatException {
        var paths = new ArrayList<List<Ancestor>>();
        for (int i = 0; i < gpus; i++) {
            paths.add(null);
        }
        var reader = new Reader(paths);
        for (var element : links.list(field)) {
            reader.place(element, List.of(), null);
        }
        for (int i = 0; i < gpus; i++) {
            if (paths.get(i) == null) {
                throw links.failure(field, "GPU " + i + " is not placed anywhere in the tree");
            }
        }
        return new PcieTree(List.copyOf(paths));
    }

    PcieRelation relation(int a, int b) {
        var pathA = paths.get(a);
        var pathB = paths.get(b);
        int shared = 0;
        while (shared < pathA.size() && shared < pathB.size() && pathA.get(shared).equals(pathB.get(shared))) {
            shared++;
        }
        if (shared == 0) {
            return PcieRelation.ACROSS_SOCKETS;
        }
        var closest = pathA.get(shared - 1);
        return switch (closest.kind()) {
            case BOARD -> PcieRelation.SAME_BOARD;
            case SWITCH -> pathA.size() == shared && pathB.size() == shared
                    ? PcieRelation.SINGLE_SWITCH : PcieRelation.MULTIPLE_SWITCHES;
            case HOST_BRIDGE -> PcieRelation.HOST_BRIDGE;
            case SOCKET -> PcieRelation.SAME_NUMA_NODE;
        };
    }

    private static final class Reader {
        private final List<List<Ancestor>> paths;
        private int nextId;

        Reader(List<List<Ancestor>> paths) {
            this.paths = paths;
        }

        void place(ProfileFields.Element element, List<Ancestor> above, Kind parent) throws ProfileFormatException {
            if (element.node().isIntegralNumber()) {
                if (parent == null) {
                    throw element.failure("expected a socket at the top of the tree, got GPU " + element.node());
                }
                int gpu = element.integer(0, paths.size() - 1);
                if (paths.get(gpu) != null) {
                    throw element.failure("GPU " + gpu + " is placed twice in the tree");
                }
                paths.set(gpu, above);
                return;
            }
            var fields = element.object();
            if (fields.node().size() != 1) {
                throw element.failure("expected one of socket, hostBridge, switch, board or a GPU index, got "
                        + ProfileFields.describe(element.node()));
            }
            var key = fields.node().properties().iterator().next().getKey();
            var kind = kindOf(key);
            if (kind == null) {
                throw fields.failure(key, "unknown element (expected socket, hostBridge, switch or board)");
            }
            if (parent == null ? kind != Kind.SOCKET : !parent.mayContain(kind)) {
                throw fields.failure(key, parent == null
                        ? "expected a socket at the top of the tree"
                        : "a " + kind.key + " cannot sit inside a " + parent.key);
            }
            var path = new ArrayList<>(above);
            path.add(new Ancestor(nextId++, kind));
            for (var child : fields.list(key)) {
                place(child, List.copyOf(path), kind);
            }
        }

        /** The kind a key names, or null for an unknown key. */
        private static Kind kindOf(String key) {
            for (var kind : Kind.values()) {
                if (kind.key.equals(key)) {
                    return kind;
                }
            }
            return null;
        }
    }
}
