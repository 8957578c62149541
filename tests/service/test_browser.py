"""The page in a real browser: headless Chromium driven by Selenium over a live server.

Asks a question and opens a citation's source card, reads a fact card, uploads documents and
watches the job finish, previews a workflow export, checks the API key lives
in the tab's session only, that the page works from the keyboard and fits a phone's width. Runs
where Debian's ``chromium`` and ``chromium-driver`` are installed (``.ci/run`` installs them).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_server import serving
from service_fixtures import FACTS_CSV, MAPPING

from ragspine import Workspace
from ragspine.service.app import create_app
from ragspine.service.guard import Limits
from ragspine.service.keys import KeyStore
from ragspine.structured.ingest import ColumnMapping

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
selenium = pytest.importorskip("selenium", reason="selenium is not installed (test extra)")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="Chromium and chromedriver are not installed at /usr/bin (apt-get install "
        "chromium chromium-driver)",
    ),
]

from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: ``$RAGSPINE_SCREENSHOTS`` (the README's come from
    ``RAGSPINE_SCREENSHOTS=docs/images``), else a temporary folder."""
    folder = Path(os.environ.get("RAGSPINE_SCREENSHOTS") or tmp_path_factory.mktemp("shots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    root = tmp_path_factory.mktemp("page")
    ws = Workspace.init(root / "ws")
    (root / "travel.md").write_text(
        "# Travel\n\nTravel costs fell as meetings moved online.\n\n"
        "## Offices\n\nThe offices stayed open all year.\n",
        encoding="utf-8",
    )
    ws.ingest_documents([root / "travel.md"], library="reports")
    (root / "acme.csv").write_text(FACTS_CSV, encoding="utf-8")
    ws.ingest_facts(root / "acme.csv", mapping=ColumnMapping.from_dict(MAPPING))
    _, key = KeyStore(ws.path).create("browser")
    _, admin = KeyStore(ws.path).create("browser-admin", admin=True)
    with serving(create_app(ws, limits=Limits(rate=0))) as url:
        yield url, key, admin
    ws.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1100,900",
        "--disable-background-networking",
        "--disable-component-update",
    ):
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('profile')}")
    service = webdriver.ChromeService(executable_path=str(CHROMEDRIVER))
    driver = webdriver.Chrome(options=options, service=service)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


def _wait(driver: webdriver.Chrome, test, timeout: float = 15):  # type: ignore[no-untyped-def]
    return WebDriverWait(driver, timeout).until(test)


def _enter_key(driver: webdriver.Chrome, url: str, key: str) -> None:
    driver.get(url + "/")
    field = driver.find_element(By.ID, "key")
    field.send_keys(key, Keys.ENTER)  # the keyboard submits the form
    _wait(driver, lambda d: "key set" in d.find_element(By.ID, "key-state").text)


def _ask(driver: webdriver.Chrome, question: str) -> None:
    box = driver.find_element(By.ID, "question")
    box.clear()
    box.send_keys(question, Keys.ENTER)
    _wait(driver, lambda d: d.find_element(By.ID, "answer").is_displayed())


def test_ask_and_open_the_cited_source(
    browser: webdriver.Chrome, site: tuple[str, str, str], shots: Path
) -> None:
    url, key, _ = site
    _enter_key(browser, url, key)
    _wait(browser, lambda d: "reports: 1 documents" in d.find_element(By.ID, "libraries").text)
    _ask(browser, "Why did travel costs fall?")
    answer = browser.find_element(By.ID, "answer-text")
    assert "Travel costs fell" in answer.text
    (cite, *_) = answer.find_elements(By.CSS_SELECTOR, "button.cite")
    assert cite.text == "[1]"
    cite.send_keys(Keys.ENTER)  # keyboard: a citation is a button
    card = browser.find_element(By.ID, "source-card")
    _wait(browser, lambda d: card.is_displayed())
    assert browser.find_element(By.ID, "card-title").text == "reports / travel.md"
    assert "Travel" in browser.find_element(By.ID, "card-locator").text
    marked = browser.find_element(By.CSS_SELECTOR, "#card-text mark")
    assert "Travel costs fell as meetings moved online." in marked.text
    browser.save_screenshot(str(shots / "page-source-card.png"))
    browser.find_element(By.ID, "card-close").click()
    trace = browser.find_element(By.ID, "trace")
    assert trace.get_attribute("open") is None  # folded
    assert "narrative" in browser.find_element(By.ID, "trace-text").get_attribute("textContent")


def test_a_structured_answer_shows_a_fact_card(
    browser: webdriver.Chrome, site: tuple[str, str, str], shots: Path
) -> None:
    url, key, _ = site
    _enter_key(browser, url, key)
    _ask(browser, "What was the revenue of ACME in FY2024?")
    card = browser.find_element(By.CSS_SELECTOR, "#facts .fact")
    assert "1250.5 million EUR" in card.text
    assert "FY2024" in card.text and "acme.csv" in card.text
    browser.save_screenshot(str(shots / "page-fact-card.png"))


def test_the_key_stays_in_the_session(
    browser: webdriver.Chrome, site: tuple[str, str, str]
) -> None:
    url, key, _ = site
    _enter_key(browser, url, key)
    assert browser.execute_script("return sessionStorage.getItem('ragspine-api-key')") == key
    assert browser.execute_script("return localStorage.length") == 0
    assert browser.execute_script("return document.cookie") == ""


def test_the_page_fits_a_phone(browser: webdriver.Chrome, site: tuple[str, str, str]) -> None:
    url, key, _ = site
    browser.set_window_size(390, 844)
    try:
        _enter_key(browser, url, key)
        _ask(browser, "Why did travel costs fall?")
        width = browser.execute_script("return document.documentElement.scrollWidth")
        inner = browser.execute_script("return window.innerWidth")
        assert width <= inner
    finally:
        browser.set_window_size(1100, 900)


def test_upload_documents_and_watch_the_job_finish(
    browser: webdriver.Chrome, site: tuple[str, str, str], tmp_path: Path, shots: Path
) -> None:
    url, _, admin = site
    _enter_key(browser, url, admin)
    first, second = tmp_path / "canteen.md", tmp_path / "parking.txt"
    first.write_text("# Canteen\n\nThe canteen menu changed in spring.\n", encoding="utf-8")
    second.write_text("Parking spaces were repainted.\n", encoding="utf-8")
    browser.find_element(By.ID, "upload-library").send_keys("uploads")
    browser.find_element(By.ID, "upload-files").send_keys(f"{first}\n{second}")
    browser.find_element(By.CSS_SELECTOR, "#upload-form button").click()
    state = browser.find_element(By.ID, "upload-state")
    _wait(browser, lambda d: state.text.startswith("done"), timeout=60)
    assert "canteen.md added" in state.text and "parking.txt added" in state.text
    bar = browser.find_element(By.ID, "upload-progress")
    assert bar.get_attribute("value") == bar.get_attribute("max") == "1"
    _wait(browser, lambda d: "uploads: 2 documents" in d.find_element(By.ID, "libraries").text)
    browser.save_screenshot(str(shots / "page-upload.png"))
    _ask(browser, "What changed in the canteen menu?")
    assert "canteen menu changed" in browser.find_element(By.ID, "answer-text").text


def test_a_workflow_export_previews_as_a_picture(
    browser: webdriver.Chrome, site: tuple[str, str, str]
) -> None:
    from wf_builders import dify_file

    url, key, _ = site
    _enter_key(browser, url, key)
    browser.find_element(By.ID, "wf-file").send_keys(
        str(dify_file("dify_conditional_branching.yml"))
    )
    browser.find_element(By.CSS_SELECTOR, "#wf-form button").click()
    picture = browser.find_element(By.ID, "wf-picture")
    _wait(browser, lambda d: d.execute_script("return arguments[0].naturalWidth", picture) > 0)


def test_no_asset_comes_from_another_host(
    browser: webdriver.Chrome, site: tuple[str, str, str]
) -> None:
    url, key, _ = site
    _enter_key(browser, url, key)
    sources = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert sources and all(name.startswith(url) for name in sources)
    assert shutil.which("chromium") or CHROMIUM.exists()


def test_a_cited_passage_beyond_the_pages_search_shows_what_the_answer_quotes(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    """A review: the card of a passage the answer cited but the page's own search (10 results)
    did not return was empty (the answer had searched again for 20, past 15 passages about
    another company). It now shows the answer's sentences citing it."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(1, 16):
        (docs / f"cn{n}.md").write_text(f"# CN note {n}\n\nMargins improved in China {n}.\n")
        (docs / f"cn{n}.md.meta.json").write_text('{"entity": "ACME CN"}')
    (docs / "acme.md").write_text("# Annual review\n\nMargins moved with freight costs.\n")
    (docs / "acme.md.meta.json").write_text('{"entity": "ACME"}')
    ws = Workspace.init(tmp_path / "ws")
    ws.ingest_documents([docs], library="news")
    _, key = KeyStore(ws.path).create("card")
    with serving(create_app(ws, limits=Limits(rate=0))) as url:
        _enter_key(browser, url, key)
        _ask(browser, "Why did ACME margins improve?")
        cites = browser.find_elements(By.CSS_SELECTOR, "#answer-text button.cite")
        assert cites, browser.find_element(By.ID, "answer-text").text
        cites[0].send_keys(Keys.ENTER)
        card = browser.find_element(By.ID, "source-card")
        _wait(browser, lambda d: card.is_displayed())
        assert browser.find_element(By.ID, "card-title").text == "news / acme.md"
        marked = browser.find_element(By.CSS_SELECTOR, "#card-text mark")
        assert "Margins moved with freight costs." in marked.text
        browser.find_element(By.ID, "card-close").click()
    ws.close()
