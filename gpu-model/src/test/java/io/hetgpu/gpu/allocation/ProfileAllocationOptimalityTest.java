package io.hetgpu.gpu.allocation;

import static io.hetgpu.gpu.allocation.GpuSetAllocatorTest.bruteForce;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.profile.ProfileLoader;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * The allocator finds the optimum on every shipped machine: for every size, with and without
 * must-include devices and the NVLink requirement, over every availability subset of 8-GPU machines
 * and thousands of random ones on 16 GPUs, its answer equals an exhaustive search over all bit masks.
 */
class ProfileAllocationOptimalityTest {

    static final List<String> PROFILES = ProfileLoader.SHIPPED;

    /** Random availability subsets checked on machines too large to try every subset. */
    private static final int RANDOM_CASES = 3000;

    @ParameterizedTest
    @FieldSource("PROFILES")
    void choosesWhatExhaustiveSearchChooses(String profile) throws Exception {
        var links = ProfileLoader.load(profile).links();
        var allocator = new GpuSetAllocator(links);
        int n = links.size();
        var random = new Random(profile.hashCode());
        int cases = 0;
        int found = 0;
        if (n <= 8) {
            for (long available = 0; available <= DeviceMask.all(n); available++) {
                // Must-include: none, and a random part of what is available (as kubelet passes it).
                for (long must : new long[] {0, available & random.nextLong() & random.nextLong()}) {
                    for (int size = 1; size <= n; size++) {
                        found += check(allocator, links, available, must, size, false) + check(allocator, links, available, must, size, true);
                        cases += 2;
                    }
                }
            }
        } else {
            for (int trial = 0; trial < RANDOM_CASES; trial++) {
                long available = random.nextLong() & (random.nextBoolean() ? random.nextLong() : -1L) & DeviceMask.all(n);
                long must = random.nextInt(3) == 0 ? available & random.nextLong() & random.nextLong() & random.nextLong() : 0;
                int size = 1 + random.nextInt(Math.max(1, Long.bitCount(available)));
                found += check(allocator, links, available, must, size, random.nextBoolean());
                cases++;
            }
        }
        // The search space was really explored: a good share of the requests could be met.
        assertThat(found).as("requests met of %d", cases).isGreaterThan(cases / 4);
    }

    /** 1 when a set exists; fails the test, naming the case, when the allocator and exhaustive search disagree. */
    private static int check(GpuSetAllocator allocator, LinkMatrix links, long available, long must, int size, boolean nvlink) {
        var chosen = allocator.choose(available & ~must, must, size, nvlink);
        var best = bruteForce(links, available, must, size, nvlink);
        if (!chosen.equals(best)) {
            fail("available %s must %s size %d nvlink %s: allocator chose %s, exhaustive search %s",
                    DeviceMask.positions(available), DeviceMask.positions(must), size, nvlink, chosen, best);
        }
        return chosen.isPresent() ? 1 : 0;
    }
}
