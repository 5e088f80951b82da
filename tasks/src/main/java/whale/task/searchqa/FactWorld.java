package whale.task.searchqa;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;

/**
 * An invented world of countries, cities and people, one short document per entity, and the
 * questions it answers. City documents do not name their country and person documents do not name
 * what they lead or founded, so a two-hop question ("Who founded the capital of Zorvia?") needs the
 * bridge entity (the capital) before its answer can be retrieved.
 *
 * <pre>
 * country: "Zorvia has capital Brintel and leader Morat."
 * city:    "Brintel was founded by Kasod on the river Osk."
 * person:  "Kasod was born in Tarnel and was a potter."
 * </pre>
 */
public final class FactWorld {
  static final String[] JOBS = {
    "potter", "sailor", "poet", "baker", "smith", "farmer", "weaver", "healer", "miner", "hunter",
    "scribe", "mason"
  };
  // Short names: the model reads and copies them character by character within a small context.
  private static final String[] ONSETS = {
    "b", "br", "d", "dr", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "tr", "v", "z", "h"
  };
  private static final String[] VOWELS = {"a", "e", "i", "o", "u"};
  private static final String[] CODAS = {"n", "r", "l", "s", "m", "x", "k", "t"};

  /** A document: its title (the entity's name) and text. */
  public record Doc(String title, String text) {}

  /** A question with its answer; {@code hops} is 1 or 2. */
  public record Fact(String question, String answer, int hops, String evidence) {}

  private record Country(String name, City capital, Person leader) {}

  private record City(String name, Person founder, String river) {}

  private record Person(String name, City[] birthplace, String job) {}  // birthplace: set after the cities

  private final List<Doc> docs = new ArrayList<>();
  private final List<Fact> facts = new ArrayList<>();

  /**
   * A world of {@code countries} countries (each with a capital and a leader), as many further
   * cities, and a founder per city; every person is born in one of the cities. About 20 questions
   * per country, 40% of them two-hop.
   */
  public FactWorld(long seed, int countries) {
    Random rnd = new Random(seed);
    Set<String> used = new HashSet<>();
    List<Person> people = new ArrayList<>();
    List<City> cities = new ArrayList<>();
    List<Country> countryList = new ArrayList<>();
    for (int i = 0; i < 2 * countries; i++) {
      Person founder = new Person(personName(rnd, used), new City[1], JOBS[rnd.nextInt(JOBS.length)]);
      people.add(founder);
      cities.add(new City(uniqueName(rnd, used, 2, ""), founder, uniqueName(rnd, used, 1, "")));
    }
    for (int i = 0; i < countries; i++) {
      Person leader = new Person(personName(rnd, used), new City[1], JOBS[rnd.nextInt(JOBS.length)]);
      people.add(leader);
      countryList.add(new Country(uniqueName(rnd, used, 1, "ia"), cities.get(i), leader));
    }
    for (Person p : people) {
      p.birthplace[0] = cities.get(rnd.nextInt(cities.size()));
    }
    for (Country c : countryList) {
      Doc d = new Doc(c.name, c.name + " has capital " + c.capital.name + " and leader " + c.leader.name
          + ".");
      docs.add(d);
      one("What is the capital of " + c.name + "?", c.capital.name, d);
      one("Who leads " + c.name + "?", c.leader.name, d);
      String cap = "the capital of " + c.name;
      String lead = "the leader of " + c.name;
      two("Who founded " + cap + "?", c.capital.founder.name);
      two("Which river does " + cap + " lie on?", c.capital.river);
      two("Where was " + lead + " born?", c.leader.birthplace[0].name);
      two("What did " + lead + " work as?", c.leader.job);
    }
    for (City c : cities) {
      Doc d = new Doc(c.name, c.name + " was founded by " + c.founder.name + " on the river " + c.river
          + ".");
      docs.add(d);
      one("Who founded " + c.name + "?", c.founder.name, d);
      one("Which river does " + c.name + " lie on?", c.river, d);
      String f = "the founder of " + c.name;
      two("Where was " + f + " born?", c.founder.birthplace[0].name);
      two("What did " + f + " work as?", c.founder.job);
    }
    for (Person p : people) {
      Doc d = new Doc(p.name, p.name + " was born in " + p.birthplace[0].name + " and was a " + p.job
          + ".");
      docs.add(d);
      one("Where was " + p.name + " born?", p.birthplace[0].name, d);
      one("What did " + p.name + " work as?", p.job, d);
    }
  }

  /** The smallest world with at least {@code questions} questions. */
  public static FactWorld withQuestions(long seed, int questions) {
    return new FactWorld(seed, Math.max(2, (questions + 19) / 20 + 1));
  }

  public List<Doc> docs() {
    return docs;
  }

  /** Every question, one-hop and two-hop, in generation order. */
  public List<Fact> facts() {
    return facts;
  }

  private void one(String q, String a, Doc d) {
    facts.add(new Fact(q, a, 1, d.text()));
  }

  private void two(String q, String a) {
    facts.add(new Fact(q, a, 2, null));
  }

  private static String personName(Random rnd, Set<String> used) {
    for (int attempt = 0; ; attempt++) {
      String n = name(rnd, 2 + attempt / 50, "");
      if (used.add(n.toLowerCase(Locale.ROOT))) {
        return n;
      }
    }
  }

  /** A fresh name; one more syllable after every 50 collisions, so a big world always finds one. */
  private static String uniqueName(Random rnd, Set<String> used, int syllables, String suffix) {
    for (int attempt = 0; ; attempt++) {
      String n = name(rnd, syllables + attempt / 50, suffix);
      if (n.length() >= 3 && used.add(n.toLowerCase(Locale.ROOT))) {
        return n;
      }
    }
  }

  private static String name(Random rnd, int syllables, String suffix) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < syllables; i++) {
      b.append(ONSETS[rnd.nextInt(ONSETS.length)]).append(VOWELS[rnd.nextInt(VOWELS.length)]);
      if (i == syllables - 1 && suffix.isEmpty() || rnd.nextInt(4) == 0) {
        b.append(CODAS[rnd.nextInt(CODAS.length)]);
      }
    }
    b.append(suffix);
    return Character.toUpperCase(b.charAt(0)) + b.substring(1);
  }
}
