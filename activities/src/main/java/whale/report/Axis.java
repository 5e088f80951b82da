package whale.report;

/** A linear axis from 0 to a round maximum, with round tick steps (1, 2, 2.5 or 5 × 10^n), 4 to 8 of them. */
record Axis(double max, double step) {

  static Axis upTo(double dataMax) {
    double target = dataMax > 0 ? dataMax : 1;
    double raw = target / 8; // at most 8 intervals, at least 4
    double mag = Math.pow(10, Math.floor(Math.log10(raw)));
    double step = mag * 10;
    for (double f : new double[] {1, 2, 2.5, 5, 10}) {
      if (f * mag >= raw * (1 - 1e-9)) {
        step = f * mag;
        break;
      }
    }
    return new Axis(Math.ceil(target / step - 1e-9) * step, step);
  }

  int ticks() {
    return (int) Math.round(max / step);
  }

  double tick(int i) {
    return i * step;
  }

  /** A tick label without float noise: 0.1 × 3 prints as 0.3, 2000.0 as 2000. */
  static String label(double v) {
    return java.math.BigDecimal.valueOf(v).setScale(6, java.math.RoundingMode.HALF_EVEN)
        .stripTrailingZeros().toPlainString();
  }
}
