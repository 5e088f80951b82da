package whale.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.multipart.MultipartConfiguration;

/**
 * An S3 bucket (and key prefix) through the AWS SDK for Java v2: endpoint, region and credentials
 * from the SDK's standard chain ({@code AWS_ENDPOINT_URL}, {@code AWS_REGION}, {@code
 * AWS_ACCESS_KEY_ID}, profiles), so one worker runs against AWS, a self-hosted server or S3Proxy.
 * Files go up through the SDK's multipart client (parts of 16 MiB, never whole in memory) and come
 * down as a stream. Checksums are whale's own sha256: the SDK's newer default CRCs are asked only
 * "when required", which S3-compatible servers accept.
 */
public final class S3Remote implements Remote {
  private static final long PART = 16L * 1024 * 1024;

  private final S3AsyncClient s3;
  private final S3AsyncClient uploads; // multipart
  private final String bucket;
  private final String prefix; // "" or "a/b/"
  private final String endpoint; // for messages

  private S3Remote(S3AsyncClient s3, S3AsyncClient uploads, String bucket, String prefix,
      String endpoint) {
    this.s3 = s3;
    this.uploads = uploads;
    this.bucket = bucket;
    this.prefix = prefix;
    this.endpoint = endpoint;
  }

  /** Whether {@code location} names an S3 store ({@code s3://bucket[/prefix]}). */
  public static boolean isS3(String location) {
    return location != null && location.startsWith("s3://");
  }

  /**
   * A client for {@code s3://bucket[/prefix]}. Path-style addressing when an endpoint is set
   * ({@code AWS_ENDPOINT_URL[_S3]}: self-hosted servers rarely have per-bucket host names), unless
   * {@code WHALE_S3_PATH_STYLE=false}; region {@code us-east-1} when the chain has none (servers
   * other than AWS ignore it, but the signer needs one).
   */
  public static S3Remote open(String location) {
    String endpoint = System.getProperty("aws.endpointUrl",
        env("AWS_ENDPOINT_URL_S3", env("AWS_ENDPOINT_URL", null)));
    return open(location, endpoint, null);
  }

  /**
   * A client for {@code location} at {@code endpoint} (null: AWS) with {@code credentials} (null:
   * the SDK's chain).
   */
  public static S3Remote open(String location, String endpoint, AwsCredentialsProvider credentials) {
    if (!isS3(location)) {
      throw new IllegalArgumentException("not an S3 location: '" + location
          + "' (expected s3://bucket or s3://bucket/prefix)");
    }
    String rest = location.substring("s3://".length());
    int slash = rest.indexOf('/');
    String bucket = slash < 0 ? rest : rest.substring(0, slash);
    String prefix = slash < 0 ? "" : rest.substring(slash + 1).replaceAll("^/+|/+$", "");
    if (!bucket.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")) {
      throw new IllegalArgumentException("bad S3 bucket name '" + bucket + "' in " + location
          + " (3 to 63 lower-case letters, digits, dots and hyphens)");
    }
    boolean pathStyle = endpoint != null
        && !"false".equalsIgnoreCase(env("WHALE_S3_PATH_STYLE", "true"));
    Region region;
    try {
      region = new DefaultAwsRegionProviderChain().getRegion();
    } catch (SdkException e) {
      region = Region.US_EAST_1;
    }
    return new S3Remote(client(region, pathStyle, endpoint, credentials, false),
        client(region, pathStyle, endpoint, credentials, true), bucket,
        prefix.isEmpty() ? "" : prefix + "/", endpoint == null ? "AWS (" + region + ")" : endpoint);
  }

  /**
   * Multipart only for uploads: its downloads ask for parts by number, which S3-compatible servers
   * (S3Proxy) refuse; a plain GET streams just as well.
   */
  private static S3AsyncClient client(Region region, boolean pathStyle, String endpoint,
      AwsCredentialsProvider credentials, boolean multipart) {
    var builder = S3AsyncClient.builder()
        .region(region)
        .forcePathStyle(pathStyle)
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
        .multipartEnabled(multipart)
        // a cut link must fail a request in bounded time, then the SDK (and Temporal) retry
        .httpClientBuilder(NettyNioAsyncHttpClient.builder()
            .connectionTimeout(Duration.ofSeconds(10))
            .readTimeout(Duration.ofSeconds(60))
            .writeTimeout(Duration.ofSeconds(60)))
        .overrideConfiguration(c -> c.retryStrategy(
            AwsRetryStrategy.standardRetryStrategy().toBuilder().maxAttempts(6).build())
            .addExecutionInterceptor(new WithoutObjectSizeCheck()));
    if (endpoint != null) {
      builder.endpointOverride(URI.create(endpoint));
    }
    if (credentials != null) {
      builder.credentialsProvider(credentials);
    }
    if (multipart) {
      builder.multipartConfiguration(MultipartConfiguration.builder()
          .thresholdInBytes(PART).minimumPartSizeInBytes(PART).build());
    }
    return builder.build();
  }

  @Override
  public String describe() {
    return "s3://" + bucket + (prefix.isEmpty() ? "" : "/" + prefix.substring(0, prefix.length() - 1))
        + " at " + endpoint;
  }

  @Override
  public void check() {
    try {
      join(s3.headBucket(b -> b.bucket(bucket)));
      join(s3.listObjectsV2(b -> b.bucket(bucket).prefix(prefix).maxKeys(1)));
    } catch (RuntimeException e) {
      throw new IllegalStateException("cannot use the S3 store " + describe() + ": " + reason(e)
          + " (endpoint from AWS_ENDPOINT_URL, credentials from AWS_ACCESS_KEY_ID/"
          + "AWS_SECRET_ACCESS_KEY or a profile)", e);
    }
  }

  @Override
  public OptionalLong size(String key) {
    try {
      return OptionalLong.of(join(s3.headObject(b -> b.bucket(bucket).key(prefix + key)))
          .contentLength());
    } catch (RuntimeException e) {
      if (missing(e)) {
        return OptionalLong.empty();
      }
      throw failed("HEAD", key, e);
    }
  }

  @Override
  public boolean download(String key, Path dest) {
    try {
      ResponseInputStream<GetObjectResponse> in = join(s3.getObject(
          b -> b.bucket(bucket).key(prefix + key), AsyncResponseTransformer.toBlockingInputStream()));
      try (InputStream body = in) {
        Files.copy(body, dest, StandardCopyOption.REPLACE_EXISTING);
      }
      return true;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot download " + describe() + "/" + key, e);
    } catch (RuntimeException e) {
      if (missing(e)) {
        return false;
      }
      throw failed("GET", key, e);
    }
  }

  @Override
  public void upload(Path file, String key) {
    try {
      join(uploads.putObject(b -> b.bucket(bucket).key(prefix + key),
          AsyncRequestBody.fromFile(file)));
    } catch (RuntimeException e) {
      throw failed("PUT", key, e);
    }
  }

  @Override
  public Optional<Versioned> get(String key) {
    try {
      var r = join(s3.getObject(b -> b.bucket(bucket).key(prefix + key),
          AsyncResponseTransformer.toBytes()));
      return Optional.of(new Versioned(r.asByteArray(), r.response().eTag()));
    } catch (RuntimeException e) {
      if (missing(e)) {
        return Optional.empty();
      }
      throw failed("GET", key, e);
    }
  }

  @Override
  public void put(String key, byte[] bytes) {
    try {
      join(s3.putObject(b -> b.bucket(bucket).key(prefix + key), AsyncRequestBody.fromBytes(bytes)));
    } catch (RuntimeException e) {
      throw failed("PUT", key, e);
    }
  }

  @Override
  public boolean putIfAbsent(String key, byte[] bytes) {
    try {
      join(s3.putObject(b -> b.bucket(bucket).key(prefix + key).ifNoneMatch("*"),
          AsyncRequestBody.fromBytes(bytes)));
      return true;
    } catch (RuntimeException e) {
      if (conflict(e)) {
        return false;
      }
      throw failed("PUT (if absent)", key, e);
    }
  }

  @Override
  public boolean putIfMatch(String key, byte[] bytes, String etag) {
    try {
      join(s3.putObject(b -> b.bucket(bucket).key(prefix + key).ifMatch(etag),
          AsyncRequestBody.fromBytes(bytes)));
      return true;
    } catch (RuntimeException e) {
      if (conflict(e) || missing(e)) {
        return false;
      }
      throw failed("PUT (if match)", key, e);
    }
  }

  @Override
  public void delete(String key) {
    try {
      join(s3.deleteObject(b -> b.bucket(bucket).key(prefix + key)));
    } catch (RuntimeException e) {
      if (!missing(e)) {
        throw failed("DELETE", key, e);
      }
    }
  }

  @Override
  public List<String> list(String under) {
    List<String> keys = new ArrayList<>();
    try {
      join(s3.listObjectsV2Paginator(b -> b.bucket(bucket).prefix(prefix + under)).contents()
          .subscribe((S3Object o) -> keys.add(o.key().substring(prefix.length()))));
    } catch (RuntimeException e) {
      throw failed("LIST", under, e);
    }
    return keys;
  }

  @Override
  public void move(String from, String to) {
    try {
      join(s3.copyObject(b -> b.sourceBucket(bucket).sourceKey(prefix + from)
          .destinationBucket(bucket).destinationKey(prefix + to)));
    } catch (RuntimeException e) {
      if (missing(e)) {
        return;
      }
      throw failed("COPY", from, e);
    }
    delete(from);
  }

  @Override
  public void close() {
    s3.close();
    uploads.close();
  }

  /**
   * The multipart client's completion sends {@code x-amz-mp-object-size}, an optional size check
   * that S3-compatible servers (S3Proxy among them) refuse as not implemented; whale's sha256 checks
   * the object anyway.
   */
  private static final class WithoutObjectSizeCheck implements ExecutionInterceptor {
    @Override
    public SdkHttpRequest modifyHttpRequest(Context.ModifyHttpRequest context,
        ExecutionAttributes attributes) {
      SdkHttpRequest r = context.httpRequest();
      return r.firstMatchingHeader("x-amz-mp-object-size").isPresent()
          ? r.toBuilder().removeHeader("x-amz-mp-object-size").build() : r;
    }
  }

  private static <T> T join(CompletableFuture<T> f) {
    try {
      return f.join();
    } catch (CompletionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : e;
    }
  }

  private static boolean missing(RuntimeException e) {
    return e instanceof NoSuchKeyException
        || e instanceof S3Exception s && s.statusCode() == 404;
  }

  /** 412: the condition failed; 409: a concurrent conditional write to the same key won. */
  private static boolean conflict(RuntimeException e) {
    return e instanceof S3Exception s && (s.statusCode() == 412 || s.statusCode() == 409);
  }

  private RuntimeException failed(String op, String key, RuntimeException e) {
    return new UncheckedIOException(new IOException(op + " " + describe() + "/" + key + " failed: "
        + reason(e), e));
  }

  private static String reason(RuntimeException e) {
    if (e instanceof S3Exception s && s.awsErrorDetails() != null) {
      return s.statusCode() + " " + s.awsErrorDetails().errorCode() + ": "
          + s.awsErrorDetails().errorMessage();
    }
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return e.getMessage() + (root != e ? " (" + root + ")" : "");
  }

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }
}
