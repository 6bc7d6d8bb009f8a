//! `runner report` and `runner diff` on the JSON reports of real runs: the exit codes and lists
//! of the diff, and the HTML page loaded in a real headless Chromium (the Debian package
//! `chromium`) with JavaScript off: its matrix, a drill-down opened by following a cell's link,
//! and a screenshot. Without Chromium the page's test is skipped with a note naming the install
//! command, except under CI (`CI` set), which installs it and where it fails instead.

mod fixtures;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const INSTALL: &str = "apt-get update && apt-get install -y chromium";

/// The longest a Chromium run may take before the test gives up on it.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(120);

/// The variables a run must not inherit from the shell that runs `cargo test`.
const VARIABLES: [&str; 6] = [
    "OPSPEC_SPECS",
    "OPSPEC_SWEEPS",
    "OPSPEC_BACKEND",
    "OPSPEC_EXPECTATIONS",
    "OPSPEC_REPORT_JSON",
    "OPSPEC_JUNIT",
];

fn runner() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    for name in VARIABLES {
        command.env_remove(name);
    }
    command
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

/// A scratch folder, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("opspec-reports-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Four slice cases: one that passes, one whose expected value is wrong (every correct
/// backend fails it), one DLA does not run, and one in WRAP mode.
const CASES: &str = r#"
cases:
  - name: kept
    source: "seed 004, example 'Slice'"
    clauses: [slice.coordinates.formula]
    attrs: {start: [0, 0], size: [2, 2], stride: [1, 1]}
    inputs:
      input: {dtype: float32, shape: [3, 3], data: [[0, 1, 2], [3, 4, 5], [6, 7, 8]]}
    expected:
      output: {dtype: float32, shape: [2, 2], data: [[0, 1], [3, 4]]}
  - name: wrong
    source: "seed 004, example 'Slice', second row moved"
    clauses: [slice.coordinates.any-stride]
    attrs: {start: [0, 0], size: [2, 2], stride: [1, 1]}
    inputs:
      input: {dtype: float32, shape: [3, 3], data: [[0, 1, 2], [3, 4, 5], [6, 7, 8]]}
    expected:
      output: {dtype: float32, shape: [2, 2], data: [[0, 1], [3, 5]]}
  - name: not_on_dla
    source: "seed 004, example 'Slice'"
    clauses: [slice.coordinates.formula]
    unsupported_on: {dla: "not on DLA (a test restriction)"}
    attrs: {start: [1, 1], size: [2, 2], stride: [1, 1]}
    inputs:
      input: {dtype: float32, shape: [3, 3], data: [[0, 1, 2], [3, 4, 5], [6, 7, 8]]}
    expected:
      output: {dtype: float32, shape: [2, 2], data: [[4, 5], [7, 8]]}
  - name: wrapped
    source: "seed 004, mode WRAP: x mod 3"
    clauses: [slice.wrap.modulo]
    attrs: {start: [2], size: [3], stride: [1], mode: wrap}
    inputs:
      input: {dtype: float32, shape: [3], data: [0, 1, 2]}
    expected:
      output: {dtype: float32, shape: [3], data: [2, 0, 1]}
"#;

const KNOWN_FAILURES: &str =
    "slice::mine::wrong | slice.coordinates.any-stride | semantics | the test's own wrong value\n";

/// Two reports of real runs over [`CASES`]: `reference.json` (the built-in reference: the
/// wrong case fails) and `dla.json` (the reference served as a DLA target without Slice's WRAP
/// mode, with a known-failures file: the wrong case is a known failure, the DLA and the WRAP
/// ones are excluded by the hello).
fn two_reports(scratch: &Scratch) -> (PathBuf, PathBuf) {
    std::fs::create_dir_all(scratch.path("specs/slice")).unwrap();
    std::fs::write(scratch.path("specs/slice/mine.yaml"), CASES).unwrap();
    std::fs::write(scratch.path("known.txt"), KNOWN_FAILURES).unwrap();
    let reference = scratch.path("reference.json");
    let output = runner()
        .arg("--specs")
        .arg(scratch.path("specs"))
        .arg("--report-json")
        .arg(&reference)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(101), "{}", text(&output));
    let dla = scratch.path("dla.json");
    let hello = r#"{"type":"hello","protocol":1,"name":"opspec-reference","ops":["slice"],"targets":["dla"],"attributes":{"slice":{"mode":["strict_bounds","clamp"]}}}"#;
    let backend = format!("{} --hello '{hello}'", fixtures::faulty_backend());
    let output = runner()
        .arg("--specs")
        .arg(scratch.path("specs"))
        .args(["--backend", &backend, "--expectations"])
        .arg(scratch.path("known.txt"))
        .arg("--backend-log")
        .arg(scratch.path("backend.log"))
        .arg("--report-json")
        .arg(&dla)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    (reference, dla)
}

#[test]
fn a_report_names_each_trials_clauses_and_replay_command() {
    let scratch = Scratch::new("json");
    let (_, dla) = two_reports(&scratch);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dla).unwrap()).unwrap();
    let trial = |name: &str| {
        report["trials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {report}"))
            .clone()
    };
    let wrong = trial("slice::mine::wrong");
    assert_eq!(wrong["status"], "known_failure");
    assert_eq!(
        wrong["clauses"],
        serde_json::json!(["slice.coordinates.any-stride"])
    );
    assert_eq!(
        wrong["known"],
        serde_json::json!({"selector": "slice::mine::wrong",
                           "clause": "slice.coordinates.any-stride", "class": "semantics",
                           "reason": "the test's own wrong value", "line": 1})
    );
    // The entry, with every trial it matched.
    assert_eq!(
        report["known_failure_entries"],
        serde_json::json!([{"line": 1, "selector": "slice::mine::wrong",
                            "clause": "slice.coordinates.any-stride", "class": "semantics",
                            "reason": "the test's own wrong value",
                            "trials": ["slice::mine::wrong"]}])
    );
    let replay = wrong["replay"].as_str().unwrap();
    assert!(
        replay.starts_with(&format!(
            "{} replay slice::mine::wrong --backend ",
            env!("CARGO_BIN_EXE_runner")
        )),
        "{replay}"
    );
    assert!(
        replay.contains(&scratch.path("specs").display().to_string()),
        "{replay}"
    );
    assert_eq!(trial("slice::mine::kept")["known"], serde_json::Value::Null);
}

#[test]
fn diff_lists_the_changes_and_fails_on_a_regression() {
    let scratch = Scratch::new("diff");
    let (reference, dla) = two_reports(&scratch);
    // Nothing changed: exit 0.
    let same = runner()
        .arg("diff")
        .args([&reference, &reference])
        .output()
        .unwrap();
    assert_eq!(same.status.code(), Some(0), "{}", text(&same));
    assert!(
        text(&same).contains("no regression: 0 of 4 trials differ"),
        "{}",
        text(&same)
    );

    // reference → dla: the failure became known (no regression), two passing trials are no
    // longer run (regressions), each excluded by a declaration of the hello, which the diff
    // counts per report and compares.
    let output = runner()
        .arg("diff")
        .args([&reference, &dla])
        .output()
        .unwrap();
    let listed = text(&output);
    assert_eq!(output.status.code(), Some(1), "{listed}");
    for needle in [
        "note: the reports are of different backends (reference and opspec-reference)",
        "\nno longer passing (2):\n  slice::mine::not_on_dla [regression]: passed → excluded (restricted on dla: not on DLA (a test restriction))",
        "\n  slice::mine::wrapped [regression]: passed → excluded (",
        "\nother changes (1):\n  slice::mine::wrong: failed → known failure (the test's own wrong value)\n",
        "\nregression (2 trials): 3 of 4 trials differ",
        "(backend opspec-reference, 4 trials)\n  excluded by the hello: 1 by slice mode=wrap, 1 by target dla\n",
        "\nexcluded by the hello, per declaration (old → new):\n  slice mode=wrap: 0 → 1\n  target dla: 0 → 1\n",
    ] {
        assert!(listed.contains(needle), "missing {needle:?} in:\n{listed}");
    }

    // dla → reference: the known failure now fails (a regression, with its replay command),
    // the DLA trial passes again.
    let output = runner()
        .arg("diff")
        .args([&dla, &reference])
        .output()
        .unwrap();
    let listed = text(&output);
    assert_eq!(output.status.code(), Some(1), "{listed}");
    for needle in [
        format!("\nnewly failing (1):\n  slice::mine::wrong [regression]: known failure → failed (1 of 4 elements differ (float32 [2, 2]); first 1: at [1, 1]: expected 5.0, got 4.0)\n      replay: {} replay slice::mine::wrong --specs ", env!("CARGO_BIN_EXE_runner")),
        "\nnewly passing (2):\n  slice::mine::not_on_dla: excluded → passed (was: restricted on dla: not on DLA (a test restriction))\n".to_owned(),
        "\nexcluded by the hello, per declaration (old → new):\n  slice mode=wrap: 1 → 0\n  target dla: 1 → 0\n".to_owned(),
    ] {
        assert!(listed.contains(needle.as_str()), "missing {needle:?} in:\n{listed}");
    }

    // The same exclusions on both sides are no news: nothing is said of them.
    let output = runner().arg("diff").args([&dla, &dla]).output().unwrap();
    let listed = text(&output);
    assert_eq!(output.status.code(), Some(0), "{listed}");
    assert!(!listed.contains("excluded"), "{listed}");
    assert!(
        listed.contains("no regression: 0 of 4 trials differ"),
        "{listed}"
    );

    // A trial that disappeared having passed is a regression; one that appeared passing is not.
    let mut trimmed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&reference).unwrap()).unwrap();
    trimmed["trials"]
        .as_array_mut()
        .unwrap()
        .retain(|t| t["name"] != "slice::mine::kept");
    let fewer = scratch.path("fewer.json");
    std::fs::write(&fewer, trimmed.to_string()).unwrap();
    let output = runner()
        .arg("diff")
        .args([&reference, &fewer])
        .output()
        .unwrap();
    let listed = text(&output);
    assert_eq!(output.status.code(), Some(1), "{listed}");
    assert!(
        listed.contains("\ndisappeared (1):\n  slice::mine::kept [regression]: passed → absent\n"),
        "{listed}"
    );
    let output = runner()
        .arg("diff")
        .args([&fewer, &reference])
        .output()
        .unwrap();
    let listed = text(&output);
    assert_eq!(output.status.code(), Some(0), "{listed}");
    assert!(
        listed.contains("\nappeared (1):\n  slice::mine::kept: absent → passed\n"),
        "{listed}"
    );

    // What cannot be read is exit code 2, naming the file.
    let missing = scratch.path("missing.json");
    let output = runner()
        .arg("diff")
        .args([&reference, &missing])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        text(&output).contains(&format!("cannot read the report {}", missing.display())),
        "{}",
        text(&output)
    );
    std::fs::write(scratch.path("junit.xml"), "<testsuites/>").unwrap();
    let output = runner()
        .arg("diff")
        .arg(scratch.path("junit.xml"))
        .arg(&reference)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        text(&output).contains("junit.xml is not a JSON report of `runner --report-json`"),
        "{}",
        text(&output)
    );
}

/// `chromium` on `PATH`. When it is not there: `None` after a note naming the install command,
/// or, under CI (which installs it, `.ci/run`), a failure, so that CI never skips the page.
fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("chromium"))
        .find(|path| path.is_file());
    if found.is_none() {
        let missing = format!(
            "Chromium is not installed: the HTML report is tested in a real headless \
             Chromium. Install it (as root) with: {INSTALL}"
        );
        assert!(
            std::env::var_os("CI").is_none(),
            "{missing}; CI must run this test"
        );
        eprintln!("{missing}; skipping the page's test");
    }
    found
}

/// A headless Chromium with a fresh profile in a scratch folder, JavaScript switched off in
/// the profile's settings (`--blink-settings=scriptEnabled=false` would do as well, but then
/// headless Chromium dumps no DOM and takes no screenshot). Its home and XDG folders are the
/// scratch folder too, so that nothing is written outside it (its crash handler writes to
/// `$XDG_CONFIG_HOME/chromium`).
struct Browser {
    program: PathBuf,
    dir: Scratch,
}

impl Browser {
    /// `None` when Chromium is not installed (outside CI; see [`chromium`]).
    fn new(name: &str) -> Option<Browser> {
        Browser::with_javascript(name, false)
    }

    /// A browser that runs scripts when `scripts`: for measuring a page's layout by a script
    /// added to a copy of it (the page itself has none).
    fn with_javascript(name: &str, scripts: bool) -> Option<Browser> {
        let program = chromium()?;
        let dir = Scratch::new(name);
        std::fs::create_dir_all(dir.path("profile/Default")).unwrap();
        let setting = if scripts { 1 } else { 2 };
        std::fs::write(
            dir.path("profile/Default/Preferences"),
            format!(r#"{{"profile": {{"default_content_setting_values": {{"javascript": {setting}}}}}}}"#),
        )
        .unwrap();
        Some(Browser { program, dir })
    }

    /// Runs Chromium on `url` with `args`; gives its stdout. Chromium and everything it
    /// started are gone when this returns.
    fn run(&self, args: &[&str], url: &str) -> String {
        let mut command = Command::new(&self.program);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ])
            .arg(format!(
                "--user-data-dir={}",
                self.dir.path("profile").display()
            ))
            .args(args)
            .arg(url)
            .env("HOME", &self.dir.0)
            .env("XDG_CONFIG_HOME", self.dir.path("config"))
            .env("XDG_CACHE_HOME", self.dir.path("cache"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, to end all of its processes at once.
            .process_group(0);
        let mut child = command.spawn().unwrap();
        let group = child.id() as i32;
        let mut stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let out = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stdout.read_to_string(&mut text);
            text
        });
        let err = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if started.elapsed() > BROWSER_TIMEOUT {
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        // Whatever of the group is left (children outlive the browser process by a moment).
        // SAFETY: killpg sends a signal; the group is the one started above.
        unsafe { libc::killpg(group, libc::SIGKILL) };
        let _ = child.wait();
        let leftovers = self.wait_for_leftovers();
        let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
        let status = status.unwrap_or_else(|| {
            panic!("Chromium took more than {BROWSER_TIMEOUT:?} on {url}; stderr:\n{stderr}")
        });
        assert!(
            leftovers.is_empty(),
            "Chromium left processes behind (ended now): {leftovers:?}"
        );
        assert!(
            status.success(),
            "Chromium: {status} on {url}; stderr:\n{stderr}"
        );
        stdout
    }

    /// Live processes whose command line names this browser's folder (its crash handler
    /// leaves the process group), given a few seconds to end; those still there are ended.
    fn wait_for_leftovers(&self) -> Vec<(i32, String)> {
        let marker = self.dir.0.display().to_string();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = processes_naming(&marker);
            if left.is_empty() || Instant::now() > deadline {
                for (pid, _) in &left {
                    // SAFETY: a process this test started (its command line names our folder).
                    unsafe { libc::kill(*pid, libc::SIGKILL) };
                }
                return left;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Live (not zombie) processes whose command line contains `marker`.
fn processes_naming(marker: &str) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let zombie = std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|stat| {
            stat.rsplit_once(") ")
                .is_some_and(|(_, s)| s.starts_with('Z'))
        });
        if cmdline.contains(marker) && !zombie {
            found.push((pid, cmdline));
        }
    }
    found
}

/// The text from the first `start` up to the next `end` after it (or the end of `text`).
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in:\n{text}"));
    let rest = &text[from..];
    let to = rest[start.len()..]
        .find(end)
        .map_or(rest.len(), |at| start.len() + at);
    &rest[..to]
}

/// Width and height of a PNG, from its IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let number = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (number(16), number(20))
}

#[test]
fn the_page_works_in_chromium_with_javascript_off() {
    let Some(browser) = Browser::new("chromium") else {
        return;
    };
    let scratch = Scratch::new("page");
    let (reference, dla) = two_reports(&scratch);
    let page = scratch.path("page.html");
    let output = runner()
        .arg("report")
        .args([&reference, &dla])
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let source = std::fs::read_to_string(&page).unwrap();
    assert!(!source.contains("<script"), "the page has a script");
    let url = format!("file://{}", page.display());

    // The matrix: one row (slice, float32: the dtype of its input), a column per engine.
    let dom = browser.run(&["--dump-dom"], &url);
    let matrix = between(&dom, "<table class=\"matrix\"", "</table>");
    assert!(
        matrix.contains("<th scope=\"col\">reference</th><th scope=\"col\">opspec-reference</th>"),
        "{matrix}"
    );
    assert!(
        matrix.contains(
            "<th scope=\"rowgroup\" rowspan=\"1\">slice</th><th scope=\"row\">float32</th>"
        ),
        "{matrix}"
    );
    let cell = between(matrix, "<td class=\"bad\" data-engine=\"0\">", "</td>");
    for chip in ["title=\"3 passed\">3 pass<", "title=\"1 failed\">1 fail<"] {
        assert!(cell.contains(chip), "missing {chip:?} in {cell}");
    }
    let cell = between(matrix, "<td class=\"known\" data-engine=\"1\">", "</td>");
    for chip in [
        "title=\"1 passed\"",
        "title=\"1 known failure\"",
        "title=\"2 excluded\"",
    ] {
        assert!(cell.contains(chip), "missing {chip:?} in {cell}");
    }
    // The trials each declaration of a hello excluded, a column per engine.
    let exclusions = between(
        &dom,
        "<table class=\"exclusions\" id=\"exclusions\">",
        "</table>",
    );
    for row in [
        "<tr><th scope=\"row\">slice mode=wrap</th><td class=\"n\" data-engine=\"0\">0</td><td class=\"n\" data-engine=\"1\">1</td></tr>",
        "<tr><th scope=\"row\">target dla</th><td class=\"n\" data-engine=\"0\">0</td><td class=\"n\" data-engine=\"1\">1</td></tr>",
    ] {
        assert!(exclusions.contains(row), "missing {row:?} in {exclusions}");
    }
    // Closed drill-downs, one per cell.
    assert_eq!(dom.matches("<details class=\"drill\">").count(), 2, "{dom}");
    // The page opens on the failures, grouped by clause: the one failing trial, with its whole
    // report, under the clause its case cites, before the matrix.
    let failures = between(
        &dom,
        "<details class=\"drill failures\" open=\"\">",
        "</details>\n",
    );
    assert!(
        failures.contains("<span class=\"where\">slice.coordinates.any-stride</span>1 failing"),
        "{failures}"
    );
    let row = between(
        failures,
        "<tr class=\"failed\" id=\"t-failure-reference-slice__mine__wrong\">",
        "</tr>",
    );
    assert!(
        row.contains("<summary>report</summary><pre>case:   slice::mine::wrong"),
        "{row}"
    );
    assert!(dom.find("id=\"failures\"").unwrap() < dom.find("id=\"matrix\"").unwrap());

    // Following the failing cell's link opens its drill-down, without any script.
    let id = between(
        matrix,
        "<td class=\"bad\" data-engine=\"0\"><a href=\"#",
        "\"",
    )
    .rsplit('#')
    .next()
    .unwrap()
    .to_owned();
    let dom = browser.run(&["--dump-dom"], &format!("{url}#{id}"));
    assert_eq!(
        dom.matches("<details class=\"drill\" open=\"\">").count(),
        1
    );
    let drill = between(
        &dom,
        "<details class=\"drill\" open=\"\">",
        "</details>\n<details",
    );
    assert!(
        drill.contains(&format!("<div class=\"trials\" id=\"{id}\">")),
        "{drill}"
    );
    let row = between(drill, "<tr class=\"failed\">", "</tr>");
    let replay = format!(
        "<code>{} replay slice::mine::wrong --specs ",
        env!("CARGO_BIN_EXE_runner")
    );
    for needle in [
        "<code>slice::mine::wrong</code>",
        "<code>slice.coordinates.any-stride</code>",
        "<td class=\"reason\">1 of 4 elements differ (float32 [2, 2]); first 1: at [1, 1]: expected 5.0, got 4.0 <a href=\"#t-failure-reference-slice__mine__wrong\">report</a>",
        &replay,
    ] {
        assert!(row.contains(needle), "missing {needle:?} in {row}");
    }
    assert!(drill.contains("3 passed"), "{drill}");

    // The other engine's drill-down: the known failure with the clause it breaks.
    let other = between(
        &dom,
        "<span class=\"where\">slice · float32 · opspec-reference",
        "</div></details>",
    );
    let row = between(other, "<tr class=\"known_failure\">", "</tr>");
    for needle in [
        "breaks <code>slice.coordinates.any-stride</code> (semantics)",
        "<td class=\"reason\">the test's own wrong value",
    ] {
        assert!(row.contains(needle), "missing {needle:?} in {row}");
    }
    // The trials the hello excluded are counted there, not listed (`--show-undeclared` lists
    // them, with why each was not sent).
    assert!(!other.contains("<tr class=\"excluded\">"), "{other}");
    assert!(
        other.contains("2 excluded by the hello, counted, not listed"),
        "{other}"
    );

    // A screenshot of the page as it opens.
    let shot = browser.dir.path("page.png");
    browser.run(
        &[
            "--window-size=1280,800",
            &format!("--screenshot={}", shot.display()),
        ],
        &url,
    );
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(png_size(&png), (1280, 800));
    // A blank 1280 × 800 page compresses to a few kB; this one holds two tables of text.
    assert!(
        png.len() > 20_000,
        "a {} byte screenshot is blank",
        png.len()
    );
}

/// The totals that open the page fit a 1280-pixel window, with four reports of one backend
/// kept in a deep folder (their names and paths are the longest cells): measured in Chromium
/// by a script added to a copy of the page.
#[test]
fn the_totals_fit_a_1280_pixel_window() {
    let Some(browser) = Browser::with_javascript("width", true) else {
        return;
    };
    let scratch = Scratch::new("width");
    let (reference, _) = two_reports(&scratch);
    let deep = scratch.path("some/rather/long/folder/of/reports/of/engine/runs");
    std::fs::create_dir_all(&deep).unwrap();
    let mut reports = Vec::new();
    for n in 1..=4 {
        let copy = deep.join(format!("openvino-2026.4.1-on-amd-epyc-9r14-run-{n}.json"));
        std::fs::copy(&reference, &copy).unwrap();
        reports.push(copy);
    }
    let page = scratch.path("page.html");
    let output = runner()
        .arg("report")
        .args(&reports)
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let probe = scratch.path("probe.html");
    let measure = "<script>document.title = [Math.ceil(document.getElementById('summary')\
                   .getBoundingClientRect().right), document.documentElement.scrollWidth, \
                   document.documentElement.clientWidth].join(' ');</script></body>";
    let source = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&probe, source.replace("</body>", measure)).unwrap();
    let dom = browser.run(
        &["--window-size=1280,900", "--dump-dom"],
        &format!("file://{}", probe.display()),
    );
    let title = between(&dom, "<title>", "</title>").trim_start_matches("<title>");
    let numbers: Vec<u32> = title.split(' ').map(|n| n.parse().unwrap()).collect();
    let [table, page_width, window] = numbers[..] else {
        panic!("{title}");
    };
    assert!(window > 1200 && window <= 1280, "{title}");
    assert!(
        table <= window,
        "the totals end at {table} px in a {window} px window"
    );
    assert!(
        page_width <= window,
        "the page is {page_width} px wide in a {window} px window"
    );
}

#[test]
fn help_lists_report_and_diff() {
    let output = runner().arg("--help").output().unwrap();
    let help = text(&output);
    assert!(output.status.success(), "{help}");
    for needle in ["\n  report ", "\n  diff "] {
        assert!(help.contains(needle), "missing {needle:?} in:\n{help}");
    }
    // `report` without its page is a usage error naming the flag.
    let output = runner().args(["report", "a.json"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output).contains("--html <FILE>"), "{}", text(&output));
}

/// A private character device 1,3 (what `/dev/null` is) at `path`: false where this process
/// may not make devices (not root).
fn null_device(path: &std::path::Path) -> bool {
    Command::new("mknod")
        .arg(path)
        .args(["c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Every report a run, `merge` and `report` write keeps what its path is: a device is written
/// in place (`--junit /dev/null` as users mean it), a symbolic link is written through to its
/// target and kept, a FIFO is refused before the run, naming it.
#[test]
fn reports_onto_a_device_a_link_or_a_fifo_keep_what_the_path_is() {
    use std::os::unix::fs::FileTypeExt;
    let scratch = Scratch::new("paths");
    std::fs::create_dir_all(scratch.path("specs/slice")).unwrap();
    std::fs::write(scratch.path("specs/slice/mine.yaml"), CASES).unwrap();
    let kind = |name: &str| {
        std::fs::symlink_metadata(scratch.path(name))
            .unwrap()
            .file_type()
    };
    let null = scratch.path("null");
    if !null_device(&null) {
        eprintln!("skipped: mknod is not allowed here (the test needs root)");
        return;
    }
    std::fs::write(scratch.path("target.json"), "old").unwrap();
    std::os::unix::fs::symlink("target.json", scratch.path("link.json")).unwrap();
    let run = |extra: &[&str]| {
        runner()
            .arg("--specs")
            .arg(scratch.path("specs"))
            .args(extra)
            .current_dir(&scratch.0)
            .output()
            .unwrap()
    };
    let parts = ["1/2", "2/2"].map(|part| {
        let name = format!("part-{}.json", &part[..1]);
        let output = run(&["--partition", part, "--report-json", &name]);
        assert!(output.status.code().is_some(), "{}", text(&output));
        name
    });
    let output = run(&["--junit", "null", "--report-json", "link.json"]);
    assert_eq!(output.status.code(), Some(101), "{}", text(&output));
    assert!(kind("null").is_char_device(), "the device became a file");
    assert!(kind("link.json").is_symlink(), "the link became a file");
    let report = std::fs::read_to_string(scratch.path("target.json")).unwrap();
    assert!(report.contains("\"trials\""), "{report}");

    let merge = runner()
        .arg("merge")
        .args(&parts)
        .args(["--out", "null"])
        .current_dir(&scratch.0)
        .output()
        .unwrap();
    assert!(merge.status.success(), "{}", text(&merge));
    assert!(kind("null").is_char_device(), "merge replaced the device");
    let page = runner()
        .args(["report", "link.json", "--html", "null"])
        .current_dir(&scratch.0)
        .output()
        .unwrap();
    assert!(page.status.success(), "{}", text(&page));
    assert!(kind("null").is_char_device(), "report replaced the device");

    let fifo = scratch.path("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for flag in ["--report-json", "--junit"] {
        let output = run(&[flag, "fifo"]);
        assert_eq!(output.status.code(), Some(2), "{}", text(&output));
        assert!(
            text(&output).contains(&format!("{flag} ")),
            "{}",
            text(&output)
        );
        assert!(text(&output).contains("FIFO"), "{}", text(&output));
        assert!(!text(&output).contains("test result"), "the run started");
        assert!(kind("fifo").is_fifo());
    }
    let merge = runner()
        .arg("merge")
        .args(&parts)
        .args(["--out", "fifo"])
        .current_dir(&scratch.0)
        .output()
        .unwrap();
    assert_eq!(merge.status.code(), Some(2), "{}", text(&merge));
    assert!(text(&merge).contains("FIFO"), "{}", text(&merge));
    assert!(kind("fifo").is_fifo());
    let mut left: Vec<String> = std::fs::read_dir(&scratch.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    left.sort();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// `runner merge` joins only parts of one run: parts whose spec files differ in content (same
/// trial names), whose known-failures files, element budgets, engines or backend commands
/// differ are refused, naming the difference.
#[test]
fn merge_refuses_parts_of_different_runs() {
    let scratch = Scratch::new("merge-runs");
    std::fs::create_dir_all(scratch.path("specs/slice")).unwrap();
    std::fs::write(scratch.path("specs/slice/mine.yaml"), CASES).unwrap();
    std::fs::write(scratch.path("known.txt"), KNOWN_FAILURES).unwrap();
    std::fs::write(
        scratch.path("other.txt"),
        format!("# other\n{KNOWN_FAILURES}"),
    )
    .unwrap();
    let part = |k: &str, name: &str, extra: &[&str]| {
        let out = scratch.path(name);
        let output = runner()
            .arg("--specs")
            .arg(scratch.path("specs"))
            .args(["--partition", &format!("{k}/2"), "--allow-skips"])
            .args(extra)
            .arg("--report-json")
            .arg(&out)
            .current_dir(&scratch.0)
            .output()
            .unwrap();
        assert!(
            output.status.code().is_some_and(|c| c < 2),
            "{}",
            text(&output)
        );
        out
    };
    let merge = |a: &PathBuf, b: &PathBuf| {
        runner()
            .arg("merge")
            .args([a, b])
            .arg("--out")
            .arg(scratch.path("merged.json"))
            .output()
            .unwrap()
    };
    let backend = fixtures::faulty_backend();
    let slow = format!("{backend} --sleep-ms 0");
    let log = scratch.path("backend.log");
    let log = log.to_str().unwrap();
    let base: [&str; 6] = [
        "--expectations",
        "known.txt",
        "--backend",
        &backend,
        "--backend-log",
        log,
    ];
    let first = part("1", "first.json", &base);
    let same = part("2", "same.json", &base);
    let output = merge(&first, &same);
    assert!(output.status.success(), "{}", text(&output));
    std::fs::remove_file(scratch.path("merged.json")).unwrap();
    let mut refused = vec![
        (
            "known-failures",
            part(
                "2",
                "k.json",
                &[
                    "--expectations",
                    "other.txt",
                    "--backend",
                    &backend,
                    "--backend-log",
                    log,
                ],
            ),
        ),
        (
            "element budget",
            part(
                "2",
                "m.json",
                &[&base[..], &["--max-elements", "1000"]].concat(),
            ),
        ),
        (
            "engine",
            part("2", "e.json", &[&base[..], &["--engine", "plain"]].concat()),
        ),
        (
            "backend command",
            part(
                "2",
                "b.json",
                &[
                    "--expectations",
                    "known.txt",
                    "--backend",
                    &slow,
                    "--backend-log",
                    log,
                ],
            ),
        ),
    ];
    // The same trial names, another expected value.
    let changed = CASES.replace("data: [[0, 1], [3, 5]]", "data: [[0, 1], [3, 6]]");
    assert_ne!(changed, CASES);
    std::fs::write(scratch.path("specs/slice/mine.yaml"), changed).unwrap();
    refused.push(("spec and sweep files", part("2", "s.json", &base)));
    for (what, other) in refused {
        let output = merge(&first, &other);
        assert_eq!(output.status.code(), Some(2), "{what}: {}", text(&output));
        assert!(text(&output).contains(what), "{what}: {}", text(&output));
        assert!(text(&output).contains("compared"), "{}", text(&output));
        // One verb for every subject, singular or plural ("the contents ... differ").
        assert!(
            text(&output).contains(": they differ in the ")
                && !text(&output).contains(" differs ("),
            "{}",
            text(&output)
        );
        assert!(!scratch.path("merged.json").exists(), "{what}");
    }
}

/// Runs `command` with at most 2 GiB of address space (a reader of `/dev/zero` fails instead
/// of taking the machine's memory) and 60 s: its exit code and output.
fn bounded(mut command: Command) -> (Option<i32>, String) {
    // SAFETY: setrlimit with a plain struct between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 2 << 30,
                rlim_max: 2 << 30,
            };
            libc::setrlimit(libc::RLIMIT_AS, &limit);
            Ok(())
        });
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after 60 s: {command:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    (output.status.code(), text(&output))
}

/// Every file the runner reads besides the specs (the reports `merge`, `diff` and `report`
/// read, the known-failures file) passes the specs' checks: a device such as `/dev/zero` or
/// a FIFO is refused at once, naming the path and what it is; nothing waits or fills memory.
#[test]
fn reports_and_known_failures_that_are_not_regular_files_are_refused() {
    let scratch = Scratch::new("not-regular");
    std::fs::create_dir_all(scratch.path("specs/slice")).unwrap();
    std::fs::write(scratch.path("specs/slice/mine.yaml"), CASES).unwrap();
    let fifo = scratch.path("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let fifo = fifo.to_str().unwrap();
    let out = scratch.path("out");
    let out = out.to_str().unwrap();
    let specs = scratch.path("specs");
    let specs = specs.to_str().unwrap();
    for source in ["/dev/zero", fifo] {
        let commands: [Vec<&str>; 4] = [
            vec!["merge", source, "--out", out],
            vec!["diff", source, source],
            vec!["report", source, "--html", out],
            vec!["--specs", specs, "--expectations", source],
        ];
        for args in commands {
            let mut command = runner();
            command.args(&args);
            let (code, output) = bounded(command);
            assert_eq!(code, Some(2), "{args:?}: {output}");
            assert!(output.contains(source), "{args:?}: {output}");
            assert!(output.contains("not a regular file"), "{args:?}: {output}");
        }
    }
}

/// A log or request dump (`--backend-log`, `--dump-requests`, libtest's `--logfile`) that
/// names a FIFO is refused before the run, naming the flag, instead of waiting for a reader.
#[test]
fn logs_and_dumps_onto_a_fifo_are_refused_before_the_run() {
    let scratch = Scratch::new("fifo-logs");
    std::fs::create_dir_all(scratch.path("specs/slice")).unwrap();
    std::fs::write(scratch.path("specs/slice/mine.yaml"), CASES).unwrap();
    let fifo = scratch.path("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let backend = fixtures::faulty_backend();
    for flag in ["--backend-log", "--dump-requests", "--logfile"] {
        let mut command = runner();
        command
            .arg("--specs")
            .arg(scratch.path("specs"))
            .args(["--backend", &backend, flag])
            .arg(&fifo);
        let (code, output) = bounded(command);
        assert_eq!(code, Some(2), "{flag}: {output}");
        assert!(output.contains(flag) && output.contains("FIFO"), "{output}");
    }
}

/// `schema/report.schema.json`, as a validator.
fn report_schema() -> jsonschema::Validator {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../schema/report.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    jsonschema::draft7::new(&schema).unwrap()
}

/// What the schema finds wrong with `report`, as `<path>: <message>`.
fn schema_problems(schema: &jsonschema::Validator, report: &serde_json::Value) -> Vec<String> {
    schema
        .iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path))
        .collect()
}

/// The reports of real runs (a failing trial, a known failure, exclusions, the run's
/// description) pass the committed schema, and a report with a field of another name or type
/// does not: the schema describes what the runner writes, closely enough to catch a reader's
/// or a hand-made report's mistake.
#[test]
fn real_reports_pass_the_report_schema_and_wrong_ones_do_not() {
    let scratch = Scratch::new("schema");
    let (reference, dla) = two_reports(&scratch);
    let schema = report_schema();
    let read = |path: &PathBuf| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    for path in [&reference, &dla] {
        let report = read(path);
        assert_eq!(
            schema_problems(&schema, &report),
            Vec::<String>::new(),
            "{}",
            path.display()
        );
    }
    let report = read(&dla);
    assert!(report["known_failure_entries"][0]["trials"].is_array());
    assert!(report["run"]["fingerprint"].is_string());
    type Change = fn(&mut serde_json::Value);
    let wrong: [(&str, Change); 5] = [
        ("an unknown top-level key", |r| r["passd"] = 1.into()),
        ("a count as a string", |r| r["passed"] = "1".into()),
        ("an unknown status", |r| {
            r["trials"][0]["status"] = "passd".into()
        }),
        ("a trial without its name", |r| {
            r["trials"][0].as_object_mut().unwrap().remove("name");
        }),
        ("an entry's line as text", |r| {
            r["known_failure_entries"][0]["line"] = "1".into()
        }),
    ];
    for (what, change) in wrong {
        let mut changed = report.clone();
        change(&mut changed);
        assert!(
            !schema_problems(&schema, &changed).is_empty(),
            "a report with {what} passes the schema"
        );
    }
}
