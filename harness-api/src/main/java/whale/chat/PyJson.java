package whale.chat;

import java.math.BigDecimal;
import java.util.Collection;
import java.util.Map;

/**
 * JSON as Python's {@code json.dumps(x, ensure_ascii=False, indent=indent)} writes it, which is what
 * transformers' {@code tojson} filter does: {@code ", "} and {@code ": "} between items on one line
 * (or {@code ","} and a newline per item with an indent), non-ASCII kept, floats in Python's repr.
 * Chat templates print tool schemas and tool-call arguments with it, so it must match byte for byte.
 */
public final class PyJson {
  private PyJson() {}

  public static String dumps(Object value) {
    return dumps(value, -1);
  }

  /** {@code indent} < 0: one line. */
  public static String dumps(Object value, int indent) {
    StringBuilder b = new StringBuilder();
    write(b, value, indent, 0);
    return b.toString();
  }

  private static void write(StringBuilder b, Object v, int indent, int depth) {
    if (v == null) {
      b.append("null");
    } else if (v instanceof Boolean x) {
      b.append(x ? "true" : "false");
    } else if (v instanceof Double || v instanceof Float) {
      b.append(floatRepr(((Number) v).doubleValue()));
    } else if (v instanceof BigDecimal x) {
      b.append(floatRepr(x.doubleValue()));
    } else if (v instanceof Number x) {
      b.append(x.toString());
    } else if (v instanceof CharSequence s) {
      string(b, s.toString());
    } else if (v instanceof Map<?, ?> m) {
      if (m.isEmpty()) {
        b.append("{}");
        return;
      }
      b.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        separate(b, first, indent, depth + 1);
        first = false;
        string(b, String.valueOf(e.getKey()));
        b.append(": ");
        write(b, e.getValue(), indent, depth + 1);
      }
      close(b, indent, depth, '}');
    } else if (v instanceof Collection<?> c) {
      if (c.isEmpty()) {
        b.append("[]");
        return;
      }
      b.append('[');
      boolean first = true;
      for (Object x : c) {
        separate(b, first, indent, depth + 1);
        first = false;
        write(b, x, indent, depth + 1);
      }
      close(b, indent, depth, ']');
    } else if (v instanceof Object[] a) {
      write(b, java.util.Arrays.asList(a), indent, depth);
    } else {
      string(b, v.toString());
    }
  }

  private static void separate(StringBuilder b, boolean first, int indent, int depth) {
    if (indent < 0) {
      if (!first) {
        b.append(", ");
      }
    } else {
      if (!first) {
        b.append(',');
      }
      b.append('\n').append(" ".repeat(indent * depth));
    }
  }

  private static void close(StringBuilder b, int indent, int depth, char c) {
    if (indent >= 0) {
      b.append('\n').append(" ".repeat(indent * depth));
    }
    b.append(c);
  }

  private static void string(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    b.append('"');
  }

  /** Python's {@code repr(float)}: the shortest round-trip digits, exponent form outside [1e-4, 1e16). */
  static String floatRepr(double d) {
    if (Double.isNaN(d)) {
      return "NaN";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "Infinity" : "-Infinity";
    }
    if (d == 0) {
      return (1 / d < 0) ? "-0.0" : "0.0";
    }
    // Java's Double.toString also gives the shortest digits that round-trip; only the layout differs
    BigDecimal x = new BigDecimal(Double.toString(Math.abs(d))).stripTrailingZeros();
    String digits = x.unscaledValue().toString();
    int exp = digits.length() - 1 - x.scale(); // decimal exponent of the first digit
    String sign = d < 0 ? "-" : "";
    if (exp >= -4 && exp < 16) {
      String plain = x.toPlainString();
      return sign + (plain.contains(".") ? plain : plain + ".0");
    }
    String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
    return sign + mantissa + "e" + (exp < 0 ? "-" : "+") + String.format("%02d", Math.abs(exp));
  }
}
