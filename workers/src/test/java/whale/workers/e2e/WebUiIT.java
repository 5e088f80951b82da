package whale.workers.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The Temporal Web UI of the real dev server in headless Chromium (Debian's chromium and
 * chromium-driver, driven by Selenium): the run is found by its search attributes, its
 * search-attributes tab shows whale's four, its user-metadata tab the current-details table, its
 * relationships tab the phase child workflows.
 * Screenshots land in target/e2e/ui/.
 */
class WebUiIT {
  static Path dir;
  static DevServer server;
  static WorkerProcess worker;
  static WebDriver browser;

  static String executable(String property, String... defaults) {
    String p = System.getProperty(property);
    for (String c : p != null ? List.of(p) : List.of(defaults)) {
      if (Files.isExecutable(Path.of(c))) {
        return c;
      }
    }
    return fail("the Web UI test needs " + String.join(" or ", defaults) + " (-D" + property
        + "): apt-get install -y chromium chromium-driver");
  }

  @BeforeAll
  static void up() throws Exception {
    dir = E2e.outputDir("ui");
    String chromium = executable("chrome.binary", "/usr/bin/chromium", "/usr/bin/chromium-browser");
    String driver = executable("webdriver.chrome.driver", "/usr/bin/chromedriver");
    server = DevServer.start(dir, true);
    worker = new WorkerProcess("control,gpu,harness,eval", server.address(), dir.resolve("artifacts"),
        dir).start();
    ChromeOptions o = new ChromeOptions();
    o.setBinary(chromium);
    o.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-dev-shm-usage", "--window-size=1400,1100",
        "--user-data-dir=" + Files.createDirectories(dir.resolve("chromium-profile")));
    ChromeDriverService service = new ChromeDriverService.Builder()
        .usingDriverExecutable(new File(driver)).usingAnyFreePort()
        .withLogFile(dir.resolve("chromedriver.log").toFile()).build();
    browser = new ChromeDriver(service, o);
  }

  @AfterAll
  static void down() {
    if (browser != null) {
      browser.quit();
    }
    if (worker != null) {
      worker.close();
    }
    if (server != null) {
      server.close();
    }
  }

  /**
   * Polls {@code look} until it returns non-null. The UI re-renders its tabs, links and the
   * metadata iframe while data loads, and an element that vanished between finding and reading it
   * surfaces as any of several WebDriver errors (a stale reference, a missing frame, or Chromium's
   * "Node with given id does not belong to the document"): each only means "look again". A real
   * failure still ends the wait, with the last error as its cause.
   */
  private static <T> T retry(int seconds, java.util.function.Function<WebDriver, T> look) {
    return new WebDriverWait(browser, Duration.ofSeconds(seconds))
        .ignoring(org.openqa.selenium.WebDriverException.class)
        .until(look::apply);
  }

  private static void screenshot(String name) throws Exception {
    File f = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
    Path to = dir.resolve(name);
    Files.copy(f.toPath(), to, StandardCopyOption.REPLACE_EXISTING);
    System.out.println("screenshot: " + to);
  }

  private static String waitForText(String... texts) {
    return retry(60, d -> {
      String body = d.findElement(By.tagName("body")).getText();
      for (String t : texts) {
        if (!body.contains(t)) {
          return null;
        }
      }
      return body;
    });
  }

  @Test
  void theRunItsSearchAttributesAndItsCurrentDetailsAreShown() throws Exception {
    String id = "ui-run";
    Temporal.cli(server.address(), "workflow", "start", "--type", "WhaleWorkflow",
        "--task-queue", "whale-control", "--workflow-id", id, "--input-file",
        E2e.tinySpec().toString()).ok();
    String result = Temporal.cli(server.address(), "workflow", "result", "--workflow-id", id,
        "-o", "json").ok();
    assertTrue(result.contains("COMPLETED"), result);

    // the list, filtered by a whale search attribute, finds the run
    String query = URLEncoder.encode("WhalePhase=\"done\"", StandardCharsets.UTF_8)
        .replace("+", "%20");
    browser.get(server.uiUrl() + "/namespaces/default/workflows?query=" + query);
    waitForText(id, "WhaleWorkflow");
    screenshot("workflows-list.png");
    retry(30, d -> {
      var links = d.findElements(By.partialLinkText(id));
      if (links.isEmpty()) {
        return null;
      }
      links.get(0).click();
      return true;
    });
    waitForText("Search Attributes", "User Metadata", "Run ID");

    // search attributes tab
    clickTab("/search-attributes");
    String attrs = waitForText("WhalePhase", "WhaleRound", "WhaleBestMeanAt8", "WhaleRollouts");
    assertTrue(attrs.contains("\"done\""), attrs);
    screenshot("search-attributes.png");

    // user metadata tab: the current-details markdown table, which the UI renders in an iframe
    clickTab("/user-metadata");
    waitForText("Current Details");
    // the UI may re-render the iframe while we look: a stale frame just means "look again"
    String table = retry(60, d -> {
      d.switchTo().defaultContent();
      for (WebElement frame : d.findElements(By.tagName("iframe"))) {
        try {
          d.switchTo().frame(frame);
          String text = d.findElement(By.tagName("body")).getText();
          if (text.contains("e2e-tiny") && text.contains("mean@2")) {
            return text;
          }
        } finally {
          d.switchTo().defaultContent();
        }
      }
      return null;
    });
    assertTrue(table.contains("pass@2") && table.contains("weight") && table.contains("harness"),
        table);
    screenshot("user-metadata.png");

    // relationships tab: the run's structure, one child workflow per phase (budget 4 steps of 2 per
    // weight phase: round 1 weight, round 1 harness, round 2 weight)
    clickTab("/relationships");
    String tree = waitForText(id + "/r1-weight", id + "/r1-harness", id + "/r2-weight",
        "WeightPhaseWorkflow", "HarnessSearchWorkflow");
    assertTrue(!tree.contains(id + "/r2-harness"), "no harness phase after the budget: " + tree);
    screenshot("relationships.png");
    clickTab("/search-attributes");
    waitForText("WhalePhase", "WhaleRollouts");
    screenshot("whale-run.png");
    Path shot = dir.resolve("whale-run.png");
    assertTrue(Files.size(shot) > 10_000, "screenshot written: " + shot);
    assertEquals(true, Files.exists(dir.resolve("search-attributes.png")));
  }

  private static void clickTab(String suffix) {
    // find and click in one retried step: the UI re-renders its tabs while data loads
    retry(30, d -> {
      var tabs = d.findElements(By.cssSelector("a[href$='" + suffix + "']"));
      if (tabs.isEmpty()) {
        return null;
      }
      tabs.get(0).click();
      return true;
    });
  }

}
