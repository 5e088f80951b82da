package whale.task.searchqa;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.queryparser.classic.MultiFieldQueryParser;
import org.apache.lucene.queryparser.classic.ParseException;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;

/**
 * A BM25 index (Lucene) over documents with a title and a text. A query is free text: it is
 * analysed like the documents (standard tokenizer, lower case, English stop words), and a term in
 * the title counts twice. Ties keep index order, so results are deterministic. Searching is
 * thread-safe: episodes call the search tool concurrently.
 */
public final class SearchIndex implements Closeable {
  /** Bumped when analysis or the document layout changes: part of the cache key of stored indexes. */
  public static final String LAYOUT = "whale-searchqa-index-v1";

  static final String ID = "id";
  static final String TITLE = "title";
  static final String TEXT = "text";

  /** One retrieved document. */
  public record Hit(String id, String title, String text, float score) {}

  /** A document to index. */
  public record Entry(String id, String title, String text) {}

  private final Directory dir;
  private final DirectoryReader reader;
  private final IndexSearcher searcher;

  private SearchIndex(Directory dir) throws IOException {
    this.dir = dir;
    this.reader = DirectoryReader.open(dir);
    this.searcher = new IndexSearcher(reader);
    this.searcher.setSimilarity(new BM25Similarity());
  }

  static Analyzer analyzer() {
    return new StandardAnalyzer(EnglishAnalyzer.ENGLISH_STOP_WORDS_SET);
  }

  /** An in-memory index of {@code entries}, in their order. */
  public static SearchIndex inMemory(List<Entry> entries) {
    ByteBuffersDirectory dir = new ByteBuffersDirectory();
    try {
      write(dir, sink -> entries.forEach(sink));
      return new SearchIndex(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot build the search index", e);
    }
  }

  /**
   * Writes the entries {@code source} feeds (streamed: a corpus need not fit in memory) into an
   * empty directory and commits them.
   */
  static void write(Directory dir, Consumer<Consumer<Entry>> source) throws IOException {
    IndexWriterConfig cfg = new IndexWriterConfig(analyzer()).setSimilarity(new BM25Similarity())
        .setOpenMode(IndexWriterConfig.OpenMode.CREATE);
    try (IndexWriter w = new IndexWriter(dir, cfg)) {
      source.accept(e -> {
        Document d = new Document();
        d.add(new StringField(ID, e.id(), Field.Store.YES));
        d.add(new TextField(TITLE, e.title(), Field.Store.YES));
        d.add(new TextField(TEXT, e.text(), Field.Store.NO));
        d.add(new StoredField(TEXT + "_stored", e.text()));
        try {
          w.addDocument(d);
        } catch (IOException x) {
          throw new UncheckedIOException(x);
        }
      });
      w.forceMerge(1); // one segment: doc order = index order, so ties break the same everywhere
      w.commit();
    }
  }

  /** Opens an index written by {@link #write} (e.g. cached in the artifact store). */
  public static SearchIndex open(Directory dir) {
    try {
      return new SearchIndex(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the search index in " + dir, e);
    }
  }

  public int size() {
    return reader.numDocs();
  }

  /** The {@code k} best documents for a free-text query; none when no query term is in the index. */
  public List<Hit> search(String query, int k) {
    if (query == null || query.isBlank() || k < 1) {
      return List.of();
    }
    MultiFieldQueryParser parser = new MultiFieldQueryParser(new String[] {TITLE, TEXT}, analyzer(),
        Map.of(TITLE, 2f, TEXT, 1f));
    parser.setDefaultOperator(QueryParser.Operator.OR);
    Query q;
    try {
      q = parser.parse(QueryParser.escape(query));
    } catch (ParseException | RuntimeException e) {
      return List.of(); // e.g. nothing left after analysis, or too many clauses
    }
    try {
      List<Hit> out = new ArrayList<>();
      for (ScoreDoc sd : searcher.search(q, k).scoreDocs) {
        Document d = searcher.storedFields().document(sd.doc);
        out.add(new Hit(d.get(ID), d.get(TITLE), d.get(TEXT + "_stored"), sd.score));
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException("search failed for '" + query + "'", e);
    }
  }

  @Override
  public void close() {
    try {
      reader.close();
      dir.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
