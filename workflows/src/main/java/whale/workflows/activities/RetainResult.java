package whale.workflows.activities;

import java.util.List;

/**
 * What a retention call deleted (objects and their unpacked caches) and what it kept because
 * another run pins it.
 */
public record RetainResult(List<String> deleted, List<String> pinnedElsewhere, long bytesFreed) {}
