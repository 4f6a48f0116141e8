package io.filecommit.commands.optimize;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link Hilbert#index}: a bijection onto the curve whose consecutive points are grid neighbours. */
class HilbertTest {
  @Test
  void consecutiveIndexesAreNeighbouringPoints() {
    for (int dims = 2; dims <= 4; dims++) {
      int bits = dims == 4 ? 2 : 3;
      int side = 1 << bits;
      int total = 1 << (bits * dims);
      Map<Long, int[]> byIndex = new HashMap<>();
      for (int cell = 0; cell < total; cell++) {
        int[] p = new int[dims];
        for (int i = 0, c = cell; i < dims; i++, c /= side) {
          p[i] = c % side;
        }
        long h = Hilbert.index(p.clone(), bits);
        byIndex.put(h, p);
      }
      assertEquals(total, byIndex.size(), "one point per index");
      for (long h = 1; h < total; h++) {
        int[] a = byIndex.get(h - 1);
        int[] b = byIndex.get(h);
        int distance = 0;
        for (int i = 0; i < dims; i++) {
          distance += Math.abs(a[i] - b[i]);
        }
        assertEquals(1, distance, "indexes " + (h - 1) + " and " + h + " in " + dims + " dimensions");
      }
    }
  }
}
