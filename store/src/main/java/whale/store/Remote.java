package whale.store;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The object store behind a worker's local cache when workers share no file system: keys under one
 * prefix, whole objects only (an object is visible complete or not at all), conditional writes for
 * the little shared bookkeeping (the pins' lock). {@link S3Remote} is the one implementation; the
 * tests run it against S3Proxy.
 */
public interface Remote extends AutoCloseable {

  /** A small object's bytes and the tag a conditional write compares. */
  record Versioned(byte[] bytes, String etag) {}

  /** Where it is, for messages: {@code s3://bucket/prefix at http://endpoint}. */
  String describe();

  /** Fails clearly (naming the bucket and endpoint) when the store cannot be reached or read. */
  void check();

  /** The object's size, or empty when there is none. */
  OptionalLong size(String key);

  /** Streams the object into {@code dest}; false when there is none. */
  boolean download(String key, Path dest);

  /** Uploads a file (in parts when big); the object appears only once every part is in. */
  void upload(Path file, String key);

  Optional<Versioned> get(String key);

  void put(String key, byte[] bytes);

  /** Creates the object only if there is none; false when there is one. */
  boolean putIfAbsent(String key, byte[] bytes);

  /** Replaces the object only if it still has {@code etag}; false when it changed or went. */
  boolean putIfMatch(String key, byte[] bytes, String etag);

  /** Deletes the object (nothing when there is none). */
  void delete(String key);

  /** Every key under {@code prefix}. */
  List<String> list(String prefix);

  /** Moves an object to another key (a corrupt object set aside); nothing when there is none. */
  void move(String from, String to);

  @Override
  void close();
}
