// A MAP value: entries in wire order (keys may be byte[] or containers, so no
// hashing). Equality in Values is order-sensitive, as the bytes are.
package fnworker.harness.types;

import java.util.ArrayList;
import java.util.List;

public final class MapValue {
  public final List<Object> keys = new ArrayList<>();
  public final List<Object> values = new ArrayList<>();

  public MapValue put(Object k, Object v) {
    keys.add(k);
    values.add(v);
    return this;
  }

  public int size() {
    return keys.size();
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("{");
    for (int i = 0; i < size(); i++) {
      sb.append(i == 0 ? "" : ", ").append(keys.get(i)).append('=').append(values.get(i));
    }
    return sb.append('}').toString();
  }
}
