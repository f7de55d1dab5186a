"""report.html in a real browser: headless Chromium through selenium and the system chromedriver.

Loads the fixture repository's report offline (file://), checks the console is clean, the
statistics shown equal report.json's, filters hide and show findings, a collapsed diff
expands, and hostile source text neither runs nor renders as markup. Screenshots land in
tests/artifacts/ for a person to look at.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from porter.converter.run import run_convert
from porter.run_options import RunOptions
from porter.reports.html import write_html

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs Debian's chromium and chromium-driver (/usr/bin/chromium, /usr/bin/chromedriver); .ci/run installs them",
    ),
]
webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (test extra)")
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()


def _report(src: Path, tmp: Path) -> tuple[dict, Path]:
    done = run_convert(src, RunOptions("mlu", "2.4", out=tmp / "out", force=True, jobs=1))
    report, out = done.report, done.out
    return report, write_html(report, out / "porter_report")


@pytest.fixture(scope="module")
def minitrain_page(tmp_path_factory) -> tuple[dict, str]:
    report, page = _report(ROOT / "fixtures" / "repos" / "minitrain", tmp_path_factory.mktemp("mt"))
    return report, page.as_uri()


@pytest.fixture(scope="module")
def minitrain(browser, minitrain_page) -> dict:
    browser.get_log("browser")  # drop anything from before this page
    browser.get(minitrain_page[1])
    return minitrain_page[0]


def _click(browser, element) -> None:
    # Centre it first: the page's sticky header would otherwise take a click at the top edge.
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def _visible_findings(browser) -> int:
    return sum(1 for row in browser.find_elements(By.CSS_SELECTOR, "#findings-table tbody tr") if row.is_displayed())


def test_loads_without_console_errors(browser, minitrain):
    assert browser.title.startswith("porter report")
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")] == []


def test_statistics_equal_report_json(browser, minitrain):
    s = minitrain["summary"]
    shown = {el.get_attribute("data-stat"): el.text for el in browser.find_elements(By.CSS_SELECTOR, "[data-stat]")}
    cuda_findings = sum(1 for f in minitrain["findings"] if not f["rule"].startswith("PRT9"))
    expected = {
        "files.scanned": s["files_scanned"],
        "files.changed": s["files_changed"],
        "files.skipped": s["files_skipped"],
        "files.failed": s["files_failed"],
        "references.found": s["edits"] + cuda_findings,
        "references.converted": s["edits"],
        "references.findings": cuda_findings,
        "lines.changed": s["lines_changed"],
        "findings.total": s["findings"],
        **{f"findings.{k}": v for k, v in s["findings_by_severity"].items()},
        **{f"edits_by_rule.{k}": v for k, v in s["edits_by_rule"].items()},
    }
    assert {k: shown[k] for k in expected} == {k: str(v) for k, v in expected.items()}
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "report_summary.png"))


def test_filters_hide_and_show_findings(browser, minitrain):
    findings = minitrain["findings"]
    severity = Select(browser.find_element(By.ID, "f-severity"))
    assert _visible_findings(browser) == len(findings)
    severity.select_by_value("error")
    assert _visible_findings(browser) == sum(f["severity"] == "error" for f in findings) < len(findings)
    path = findings[-1]["path"]
    Select(browser.find_element(By.ID, "f-path")).select_by_value(path)
    assert _visible_findings(browser) == sum(f["severity"] == "error" and f["path"] == path for f in findings)
    severity.select_by_value("")
    Select(browser.find_element(By.ID, "f-path")).select_by_value("")
    code = findings[0]["rule"]
    Select(browser.find_element(By.ID, "f-rule")).select_by_value(code)
    assert _visible_findings(browser) == sum(f["rule"] == code for f in findings)
    Select(browser.find_element(By.ID, "f-rule")).select_by_value("")
    assert _visible_findings(browser) == len(findings)


def test_collapsed_diff_expands_and_names_its_rules(browser, minitrain):
    diffs = browser.find_elements(By.CSS_SELECTOR, "details.diff")
    assert diffs and not any(d.get_attribute("open") for d in diffs)
    first = browser.find_element(By.CSS_SELECTOR, "details.diff[data-python]")
    row = first.find_element(By.CSS_SELECTOR, "tbody tr")
    assert not row.is_displayed()
    _click(browser, first.find_element(By.TAG_NAME, "summary"))
    assert first.get_attribute("open") is not None and row.is_displayed()
    # The toggle event that colours the code fires after the click returns.
    WebDriverWait(browser, 5).until(lambda _: first.find_elements(By.CSS_SELECTOR, "td.c span.hl-k"))
    link = first.find_element(By.CSS_SELECTOR, "table.hunk th a.rule")
    _click(browser, link)
    assert browser.find_element(By.ID, f"rule-{link.text}").is_displayed()
    browser.execute_script("arguments[0].scrollIntoView()", first)
    browser.save_screenshot(str(ARTIFACTS / "report_diff.png"))


def test_finding_link_opens_its_line_in_the_diff(browser, minitrain):
    _click(browser, browser.find_element(By.ID, "collapse-all"))
    link = browser.find_element(By.CSS_SELECTOR, "#findings-table a[href*='-L']")
    _click(browser, link)
    row = browser.find_element(By.ID, link.get_attribute("href").split("#")[1])
    WebDriverWait(browser, 5).until(lambda _: row.is_displayed())
    where = link.text.split(":")
    assert row.find_element(By.CSS_SELECTOR, "td:first-child").text == where[1]


def test_sorting_the_file_list(browser, minitrain):
    header = browser.find_element(By.XPATH, "//table[@id='files-table']//th[normalize-space()='edits']")
    column = 3

    def edits() -> list[int]:
        rows = browser.find_elements(By.CSS_SELECTOR, "#files-table tbody tr")
        return [int(r.find_elements(By.TAG_NAME, "td")[column].get_attribute("textContent")) for r in rows]

    _click(browser, header)
    assert edits() == sorted(edits())
    _click(browser, header)
    assert edits() == sorted(edits(), reverse=True)


def test_hostile_source_is_inert(browser, tmp_path):
    shutil.copytree(ROOT / "fixtures" / "report" / "hostile", tmp_path / "src")
    _, page = _report(tmp_path / "src", tmp_path)
    browser.get_log("browser")
    browser.get(page.as_uri())
    _click(browser, browser.find_element(By.ID, "expand-all"))
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 (reading it is the check)
    assert browser.find_elements(By.CSS_SELECTOR, "main img, main b, main script") == []
    cells = " ".join(c.text for c in browser.find_elements(By.CSS_SELECTOR, "td.c"))
    assert "</script><img src=x onerror=alert(2)> {{ 7 * 7 }}" in cells
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_large_port_stays_usable(browser, tmp_path, llama_factory):
    report, page = _report(llama_factory, tmp_path)
    assert page.stat().st_size < 5 * 2**20
    browser.get_log("browser")
    browser.get(page.as_uri())
    diffs = browser.find_elements(By.CSS_SELECTOR, "details.diff")
    assert diffs and not any(d.get_attribute("open") for d in diffs)
    _click(browser, browser.find_element(By.ID, "expand-all"))
    # Every edited line carries its rules in the diff's gutter; every finding is listed.
    marked = browser.execute_script("return document.querySelectorAll('tr:not(.fnds) > td:nth-child(3) a.rule').length")
    assert marked == len({(f["path"], e["line"]) for f in report["files"] for e in f.get("edits", [])})
    assert len(browser.find_elements(By.CSS_SELECTOR, "#findings-table tbody tr")) == len(report["findings"])
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
    browser.save_screenshot(str(ARTIFACTS / "report_large.png"))


WIDTHS = (1400, 700, 390)  # desktop, a half screen, a phone


@pytest.fixture
def sized(browser, minitrain_page):
    """Loads the minitrain page at a width (the window is put back afterwards)."""

    def load(width: int) -> None:
        browser.set_window_size(width, 1000)
        browser.get(minitrain_page[1])

    yield load
    browser.set_window_size(1400, 1000)
    browser.get(minitrain_page[1])


# Client rectangles per piece of text: a word broken over two lines has two.
_PIECES = """
const rects = n => { const r = document.createRange(); r.selectNodeContents(n); return r.getClientRects().length; };
const texts = el => { const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT); const out = []; let n;
  while ((n = w.nextNode())) { if (n.textContent.trim()) out.push([n.textContent, rects(n)]); } return out; };
return Array.from(document.querySelectorAll('#findings-table tbody tr')).map(row => ({
  severity: texts(row.cells[0]), rule: texts(row.cells[1]), where: texts(row.cells[2])}));
"""


_FITS = "return Array.from(document.querySelectorAll(arguments[0])).every(e => e.getBoundingClientRect().right <= window.innerWidth)"


def test_findings_table_keeps_words_whole_at_every_width(browser, minitrain, sized):
    for width in WIDTHS:
        sized(width)
        rows = browser.execute_script(_PIECES)
        assert len(rows) == len(minitrain["findings"])
        for row in rows:
            # a severity and a rule code are one line each; a path breaks only between its folders
            assert [n for _, n in row["severity"]] == [1] and [n for _, n in row["rule"]] == [1], (width, row)
            assert all(n == 1 for _, n in row["where"]), (width, row["where"])
        assert browser.execute_script(_FITS, "#findings-table"), width
        _click(browser, browser.find_element(By.CSS_SELECTOR, "#findings-table tbody tr"))
        browser.execute_script("document.getElementById('findings').scrollIntoView(); window.scrollBy(0, -120)")
        browser.save_screenshot(str(ARTIFACTS / f"report_findings_{width}.png"))


def test_findings_sit_under_their_lines_in_the_diffs(browser, minitrain, sized):
    for width in (1400, 390):
        sized(width)
        _click(browser, browser.find_element(By.ID, "expand-all"))
        boxes = browser.find_elements(By.CSS_SELECTOR, "details.diff .fnd")
        assert len(boxes) == len(minitrain["findings"])  # each finding once, in its file's diff
        placed = browser.execute_script("""
          return Array.from(document.querySelectorAll('tr.fnds')).map(tr => {
            const line = tr.previousElementSibling, box = tr.querySelector('.fnd');
            return {line: line.cells[0].textContent, bottom: line.getBoundingClientRect().bottom,
                    top: box.getBoundingClientRect().top, text: box.textContent,
                    inside: box.getBoundingClientRect().right <= tr.closest('details').getBoundingClientRect().right + 1};
          });""")
        assert placed
        for p in placed:
            assert f"line {p['line']}:" in p["text"] and 0 <= p["top"] - p["bottom"] < 20 and p["inside"], (width, p)
        first = browser.find_element(By.CSS_SELECTOR, "tr.fnds")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", first)
        browser.save_screenshot(str(ARTIFACTS / f"report_inline_findings_{width}.png"))


def test_charts_draw_their_counts_in_proportion(browser, minitrain, sized):
    for width in (1400, 390):
        sized(width)
        charts = browser.execute_script("""
          return Array.from(document.querySelectorAll('figure.chart')).map(f => ({
            title: f.querySelector('figcaption').textContent,
            bars: Array.from(f.querySelectorAll('tr')).map(tr => ({
              count: +tr.querySelector('[data-chart]').textContent,
              bar: tr.querySelector('rect:not(.track)').getBoundingClientRect().width,
              track: tr.querySelector('rect.track').getBoundingClientRect().width}))}));""")
        titles = [c["title"] for c in charts]
        assert titles[:3] == ["Findings by severity", "Findings by rule", "Findings by folder"]
        assert titles[3].startswith("torch APIs used") and len(charts) == 4
        severity = {s: n for s, n in minitrain["summary"]["findings_by_severity"].items()}
        assert [b["count"] for b in charts[0]["bars"]] == [severity[s] for s in ("error", "warning", "info")]
        apis = minitrain["summary"]["apis_by_status"]
        assert sorted(b["count"] for b in charts[3]["bars"]) == sorted(apis.values())
        for chart in charts:
            top = max(b["count"] for b in chart["bars"])
            for b in chart["bars"]:
                assert b["track"] > 40 and abs(b["bar"] / b["track"] - b["count"] / top) < 0.02, (
                    width,
                    chart["title"],
                    b,
                )
        assert browser.execute_script(_FITS, "figure.chart"), width
        browser.execute_script("document.getElementById('summary').scrollIntoView(); window.scrollBy(0, -120)")
        browser.save_screenshot(str(ARTIFACTS / f"report_charts_{width}.png"))
