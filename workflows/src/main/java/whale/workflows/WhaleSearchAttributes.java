package whale.workflows;

import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.common.SearchAttributeKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The search attributes a run keeps current for the Web UI and for `temporal workflow list`. */
public final class WhaleSearchAttributes {
  public static final SearchAttributeKey<String> PHASE = SearchAttributeKey.forKeyword("WhalePhase");
  public static final SearchAttributeKey<Long> ROUND = SearchAttributeKey.forLong("WhaleRound");
  public static final SearchAttributeKey<Double> BEST_MEAN_AT_8 =
      SearchAttributeKey.forDouble("WhaleBestMeanAt8");
  public static final SearchAttributeKey<Long> ROLLOUTS = SearchAttributeKey.forLong("WhaleRollouts");

  /** Name to server type, for registering them (operator service, dev server flags, test server). */
  public static final Map<String, IndexedValueType> ALL = Map.of(
      PHASE.getName(), IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      ROUND.getName(), IndexedValueType.INDEXED_VALUE_TYPE_INT,
      BEST_MEAN_AT_8.getName(), IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
      ROLLOUTS.getName(), IndexedValueType.INDEXED_VALUE_TYPE_INT);

  private WhaleSearchAttributes() {}

  /** {@code --search-attribute Name=Type} flags registering them on `temporal server start-dev`. */
  public static List<String> devServerArgs() {
    List<String> args = new ArrayList<>();
    new TreeMap<>(ALL).forEach((name, type) -> {
      args.add("--search-attribute");
      args.add(name + "=" + switch (type) {
        case INDEXED_VALUE_TYPE_KEYWORD -> "Keyword";
        case INDEXED_VALUE_TYPE_INT -> "Int";
        case INDEXED_VALUE_TYPE_DOUBLE -> "Double";
        default -> throw new IllegalStateException("no dev-server name for " + type);
      });
    });
    return args;
  }
}
