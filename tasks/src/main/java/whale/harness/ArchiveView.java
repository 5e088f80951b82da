package whale.harness;

import java.util.List;

/** The harness phase's archive so far, in the order candidates were added. */
public record ArchiveView(List<ArchiveEntry> entries) {
  public ArchiveView {
    entries = List.copyOf(entries);
  }

  public static ArchiveView empty() {
    return new ArchiveView(List.of());
  }
}
