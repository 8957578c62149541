"""Section names are content: headings, heading paths and titles screened like text."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ragspine import Principal, Workspace
from ragspine.cli import main
from ragspine.errors import StoreError
from ragspine.narrative import labels
from ragspine.narrative.ingest import ingestor as ingest
from ragspine.narrative.ingest.ingestor import IngestStatus
from ragspine.narrative.labels import (
    at_or_below,
    name_levels,
    normalize_name,
    path_level,
    screen_locator,
    screen_path,
    screen_title,
    unmatched_names,
)
from ragspine.narrative.retrieve import expansion
from ragspine.security import Sensitivity
from ragspine.stores.sqlite import upgrade as store_upgrade
from ragspine.stores.sqlite.chunks import SCHEMA_VERSION

SECRET = "Zebra7731"
LEVELS = name_levels([(f"{SECRET} Plan", 3), ("Pay > Bonus", 2), ("pay  > bonus", 1)])


def test_names_compare_folded_and_collapsed() -> None:
    assert normalize_name("  \uff30ay\u00a0 >  BONUS ") == "pay > bonus"
    assert LEVELS == {"zebra7731 plan": 3, "pay > bonus": 2}  # the higher level wins


def test_a_path_takes_the_level_of_every_name_on_it() -> None:
    assert path_level(("Overview",), 0, LEVELS) == Sensitivity.PUBLIC
    assert path_level(("Overview", "zebra7731  PLAN", "Detail"), 1, LEVELS) == 3
    # a heading whose own text holds the path separator still matches as one name
    assert path_level(("Pay > Bonus",), 0, LEVELS) == Sensitivity.CONFIDENTIAL


def test_screens_keep_only_names_the_reader_may_see() -> None:
    public = at_or_below(0)
    path = ["Overview", f"{SECRET} plan", "Pay > Bonus"]
    assert screen_path(path, LEVELS, public) == ["Overview"]
    assert screen_path(path, LEVELS, at_or_below(2)) == ["Overview", "Pay > Bonus"]
    assert screen_title(f"{SECRET} Plan", "docs/plan.md", LEVELS, public) == "plan"
    assert screen_title(f"{SECRET} Plan", f"docs/{SECRET} plan.md", LEVELS, public) == ""
    assert screen_title("Annual report", "docs/plan.md", LEVELS, public) == "Annual report"
    locator = {"file": "plan.md", "heading_path": [f"{SECRET} plan"], "paragraph": 0}
    assert screen_locator(locator, LEVELS, public) == {"file": "plan.md", "paragraph": 0}
    assert screen_locator("plan.md#3", LEVELS, public) == "plan.md#3"


def _titled_doc(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.md").write_text(
        f"# {SECRET} Plan\n\nThe {SECRET} plan stays secret.\n\n"
        "# Budget overview\n\nThe budget grows by 12 million.\n\n"
        "# Pay > Bonus\n\nBonus rules for 2024.\n",
        encoding="utf-8",
    )
    (folder / "report.md.meta.json").write_text(
        json.dumps(
            {"section_sensitivity": {f"{SECRET} Plan": "restricted", "Pay > Bonus": "internal"}}
        )
    )
    return folder


def test_a_restricted_first_heading_is_not_the_title_of_public_chunks(
    workspace_dir: Path, tmp_path: Path
) -> None:
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([_titled_doc(tmp_path / "docs")], library="r")
    store = ws.chunks
    chunks = sorted(
        store.chunks_by_key(store.chunk_keys("r", "report.md")).values(), key=lambda c: c.key
    )
    assert [(c.heading, c.title, int(c.sensitivity)) for c in chunks] == [
        (f"{SECRET} Plan", f"{SECRET} Plan", 3),
        ("Budget overview", "report", 0),
        ("Pay > Bonus", "report", 1),  # the separator inside a heading no longer hides it
    ]
    for mode in ("bm25", "lexical"):  # title+text and title+heading+text indexes
        assert ws.search(SECRET, mode=mode).snippets == ()
        assert ws.search("plan", mode=mode).snippets == ()
        assert ws.search("bonus", mode=mode, principal=Principal.of("internal")).snippets
    (hit,) = ws.search("budget").snippets
    assert (hit.title, hit.heading) == ("report", "Budget overview")
    assert "zebra7731" not in ws.chunks.term_counts("r", 2)


def test_a_leaky_title_rule_is_caught(
    workspace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reverse proof: with titles no longer screened at ingest, the public search finds the
    public chunk by the restricted heading's word."""
    monkeypatch.setattr(ingest, "screen_title", lambda title, *args: title)
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([_titled_doc(tmp_path / "docs")], library="r")
    assert [s.doc_id for s in ws.search(SECRET).snippets] == ["report.md"]


def _plant_title(ws: Workspace, title: str) -> None:
    """Simulate a store written by a leaky ingest: the public chunk carries a hidden title."""
    db = sqlite3.connect(ws.db_path)
    with db:
        db.execute("UPDATE narrative_chunks SET title = ? WHERE sensitivity = 0", (title,))
        db.execute(
            "UPDATE narrative_chunks SET source_locator = json_set(source_locator, "
            "'$.heading_path', json_array(?, 'Budget overview')) WHERE sensitivity = 0",
            (title,),
        )
    db.close()


def test_snippets_screen_names_a_stored_chunk_should_not_carry(
    workspace_dir: Path, tmp_path: Path
) -> None:
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([_titled_doc(tmp_path / "docs")], library="r")
    _plant_title(ws, f"{SECRET} Plan")
    (hit,) = ws.search("budget").snippets
    assert SECRET not in json.dumps(hit.to_dict())
    assert hit.title == "report"
    assert hit.heading == "Budget overview"
    assert hit.source_locator["heading_path"] == ["Budget overview"]  # type: ignore[index]
    assert SECRET not in ws.answer_narrative("budget").render()


def test_a_snippet_stage_without_the_name_screen_is_caught(
    workspace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([_titled_doc(tmp_path / "docs")], library="r")
    _plant_title(ws, f"{SECRET} Plan")
    monkeypatch.setattr(
        expansion,
        "screen_names",
        lambda chunk, parent_locator, principal: expansion._Names(
            chunk.title, chunk.heading, chunk.source_locator, parent_locator
        ),
    )
    (hit,) = ws.search("budget").snippets
    assert SECRET in json.dumps(hit.to_dict())


def _plan_doc(folder: Path, heading: str, keys: dict[str, str]) -> Path:
    """A public plan with one sub-section the sidecar ``keys`` mean to restrict."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plan.md").write_text(
        f"# Plan\n\nThe public plan overview.\n\n## {heading}\n\nThe zwsword figures stay "
        "with the board.\n",
        encoding="utf-8",
    )
    (folder / "plan.md.meta.json").write_text(json.dumps({"section_sensitivity": keys}))
    return folder


@pytest.mark.parametrize(
    ("heading", "key", "stored"),
    [
        ("Sal\u00adary Review", "Salary Review", "Salary Review"),  # soft hyphen
        ("Merger\u200b talks", "Merger talks", "Merger talks"),  # zero-width space
        ("**Merger** talks", "Merger talks", "Merger talks"),  # inline emphasis
        ("The [*merger*](https://x.example) `talks`", "The merger talks", "The merger talks"),
        ("Salary Review", "Sal\u00adary \u200bREVIEW", "Salary Review"),  # on the key side
    ],
    ids=["soft-hyphen", "zero-width-space", "emphasis", "link-and-code", "invisible-key"],
)
def test_a_section_key_matches_its_heading_however_the_heading_is_spelled(
    workspace_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    heading: str,
    key: str,
    stored: str,
) -> None:
    docs = _plan_doc(tmp_path / "docs", heading, {key: "restricted"})
    ws = Workspace.open(workspace_dir)
    report = ws.ingest_documents([docs], library="r")
    assert [o.status for o in report.outcomes] == [IngestStatus.ADDED]
    assert ws.search("zwsword").snippets == ()
    store = ws.chunks
    chunks = sorted(
        store.chunks_by_key(store.chunk_keys("r", "plan.md")).values(), key=lambda c: c.key
    )
    assert [(c.heading, c.sensitivity) for c in chunks] == [
        ("Plan", Sensitivity.PUBLIC),
        (f"Plan > {stored}", Sensitivity.RESTRICTED),  # stored clean, and restricted
    ]
    ws.close()
    assert main(["--workspace", str(workspace_dir), "search", "zwsword", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["snippets"] == []


def test_a_section_key_naming_no_heading_fails_the_document(
    workspace_dir: Path, tmp_path: Path
) -> None:
    keys = {"Salary Review": "restricted", "Typo secton": "restricted"}
    docs = _plan_doc(tmp_path / "docs", "Salary Review", keys)
    ws = Workspace.open(workspace_dir)
    (outcome,) = ws.ingest_documents([docs], library="r").outcomes
    assert outcome.status is IngestStatus.FAILED
    assert "section_sensitivity names no heading of the document: 'Typo secton'" in outcome.reason
    assert "(its headings: 'Plan', 'Salary Review')" in outcome.reason
    assert ws.chunks.document("r", "plan.md") is None  # nothing of it is written
    assert ws.search("overview").snippets == ()


def test_an_unmatched_key_still_fails_under_a_wrong_matching_rule(
    workspace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Second line of defence: with invisible characters counted again, the key no longer
    names its heading, and the document fails instead of going public."""
    monkeypatch.setattr(labels, "normalize_name", lambda name: " ".join(name.casefold().split()))
    docs = _plan_doc(tmp_path / "docs", "Salary Review", {"Sal\u00adary Review": "restricted"})
    ws = Workspace.open(workspace_dir)
    (outcome,) = ws.ingest_documents([docs], library="r").outcomes
    assert outcome.status is IngestStatus.FAILED
    assert "'Sal\\xadary Review'" in outcome.reason  # quote_input shows the invisible character
    assert ws.search("zwsword").snippets == ()


def test_a_failed_key_lists_the_headings_shortened() -> None:
    headings = [f"Heading {n}" for n in range(24)] + ["x" * 500]
    source = ingest.DocumentSource(
        "d", "", "d.md",
        tuple(ingest.Section((h,), (ingest.Paragraph("text"),)) for h in headings),
        "hash", section_levels=(("y" * 500, Sensitivity.RESTRICTED),),
    )  # fmt: skip
    with pytest.raises(ingest.IngestError) as caught:
        ingest.check_section_names(source)
    message = str(caught.value)
    assert "'Heading 19' and 5 more)" in message and "Heading 20" not in message
    assert "(500 characters)" in message and "y" * 200 not in message
    assert unmatched_names(["Heading\u00ad 3", "heading 99"], headings) == ["heading 99"]


def test_a_document_labelled_by_an_older_name_rule_is_labelled_again(
    workspace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stores written before this rule are relabelled by the next ingest, not left unchanged."""
    docs = _plan_doc(tmp_path / "docs", "Salary Review", {"Salary Review": "restricted"})
    ws = Workspace.open(workspace_dir)
    with monkeypatch.context() as old:
        old.setattr(ingest, "SECTION_RULE", "section-names:1")
        ws.ingest_documents([docs], library="r")
    (outcome,) = ws.ingest_documents([docs], library="r").outcomes
    assert outcome.status is IngestStatus.REPLACED
    (outcome,) = ws.ingest_documents([docs], library="r").outcomes
    assert outcome.status is IngestStatus.UNCHANGED


def _downgrade_to_v1(db_path: Path, raw_title: str) -> None:
    """Turn a store into what schema v1 wrote: no per-chunk titles or section levels, the
    document's raw title, profiles counted with it."""
    db = sqlite3.connect(db_path)
    with db:
        db.execute("ALTER TABLE narrative_chunks DROP COLUMN title")
        db.execute("ALTER TABLE narrative_documents DROP COLUMN section_levels")
        db.execute("UPDATE narrative_documents SET title = ?", (raw_title,))
        db.execute("UPDATE narrative_meta SET value = '1' WHERE key = 'schema_version'")
    db.close()


def test_a_v1_store_is_upgraded_in_place_and_screened(workspace_dir: Path, tmp_path: Path) -> None:
    docs = _titled_doc(tmp_path / "docs")
    (docs / "notes.txt").write_text("Budget notes for everyone.\n", encoding="utf-8")
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([docs], library="r")
    generation = ws.chunks.generation("r")
    ws.close()
    _downgrade_to_v1(workspace_dir / "workspace.sqlite", f"{SECRET} Plan")
    for manifest in (workspace_dir / "indexes" / "r").glob("lexical-*/lexical.json"):
        old = json.loads(manifest.read_text())  # v1 stores came with format-1 indexes
        manifest.write_text(json.dumps({**old, "version": 1}))

    upgraded = Workspace.open(workspace_dir)
    store = upgraded.chunks
    assert store.generation("r") == generation + 1  # the indexes are rebuilt from the new rows
    titles = {
        (c.doc_id, c.title)
        for c in store.chunks_by_key(
            store.chunk_keys("r", "report.md") + store.chunk_keys("r", "notes.txt")
        ).values()
    }
    # a mixed-level document's title is withheld; a uniform one keeps the stored title
    assert titles == {("report.md", "report"), ("notes.txt", f"{SECRET} Plan")}
    result = upgraded.search("budget", libraries=["r"])
    # a reader never uses the old-format index: it builds one in memory until the next writer
    assert upgraded.lexical_indexes.rebuilt == ["r/title_text (in memory)"]
    assert all(s.title != f"{SECRET} Plan" for s in result.snippets if s.doc_id == "report.md")
    # the next ingest of the same files rewrites every document under the exact rules
    report = upgraded.ingest_documents([docs], library="r")
    assert [o.status for o in report.outcomes] == [IngestStatus.REPLACED] * 2
    assert {c.title for c in store.chunks_by_key(store.chunk_keys("r", "notes.txt")).values()} == {
        "notes"
    }


def test_a_newer_store_is_refused_with_what_to_do(workspace_dir: Path) -> None:
    ws = Workspace.open(workspace_dir)
    ws.chunks  # noqa: B018 - creates the chunk store
    ws.close()
    db = sqlite3.connect(workspace_dir / "workspace.sqlite")
    with db:
        db.execute(
            "UPDATE narrative_meta SET value = ? WHERE key = 'schema_version'",
            (str(SCHEMA_VERSION + 1),),
        )
    db.close()
    with pytest.raises(
        StoreError, match=f"schema v{SCHEMA_VERSION + 1}.*RAGSpine version that wrote it"
    ):
        Workspace.open(workspace_dir).chunks  # noqa: B018


def test_an_upgrade_another_process_finished_is_not_repeated(workspace_dir: Path) -> None:
    ws = Workspace.open(workspace_dir)
    ws.create_library("r")
    ws.close()
    db_path = workspace_dir / "workspace.sqlite"
    _downgrade_to_v1(db_path, "Title")
    db = sqlite3.connect(db_path, isolation_level=None)
    store_upgrade.upgrade(db, 1, SCHEMA_VERSION, str(db_path))
    generation = db.execute("SELECT generation FROM narrative_libraries").fetchone()
    store_upgrade.upgrade(db, 1, SCHEMA_VERSION, str(db_path))  # read v1 before the other won
    assert db.execute("SELECT generation FROM narrative_libraries").fetchone() == generation
    db.close()
