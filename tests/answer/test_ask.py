"""``Workspace.ask`` and ``ragspine ask`` end to end: every route and status, composite merging,
the numeric guard, history, locales and access control."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from ragspine import Principal, Workspace
from ragspine.answer import router
from ragspine.answer.types import Answer, AnswerStatus, CitedSentence, FigureKind
from ragspine.cli import main
from ragspine.security import Sensitivity
from ragspine.structured.facts import Fact, Scale
from ragspine.workspace import example_glossary_text

PUBLIC = Principal.of("public")
INTERNAL = Principal.of("internal")

REPORT = """# ACME annual report 2024

## Results

ACME revenue rose in FY2024 because online demand grew strongly in every region.
Net income improved after cost savings.

## Press

ACME revenue was 150,000 in FY2024 according to an early press estimate.
"""
SECRET_DOC = "Project Zeppelin: ACME revenue will collapse because of the lawsuit.\n"


def _fact(metric: str, entity: str, period: str, value: str, level: Sensitivity) -> Fact:
    return Fact(
        metric,
        entity,
        period,
        "total",
        Decimal(value),
        "USD",
        "USD",
        Scale.ONE,
        f"{entity}-{period}.pdf",
        f"p. 4, {metric}",
        level,
    )


FACTS = [
    _fact("revenue", "acme", "FY2023", "161529.1", Sensitivity.PUBLIC),
    _fact("revenue", "acme", "FY2024", "179260.3", Sensitivity.PUBLIC),
    _fact("net_income", "acme", "FY2022", "0.1", Sensitivity.PUBLIC),
    _fact("net_income", "acme", "FY2023", "0.2", Sensitivity.PUBLIC),
    _fact("net_income", "acme", "FY2024", "0.3", Sensitivity.PUBLIC),
    _fact("revenue", "acme_cn", "FY2024", "1234.5", Sensitivity.PUBLIC),
]
HIDDEN = [
    _fact("revenue", "acme", "FY2025", "999999.9", Sensitivity.CONFIDENTIAL),
    _fact("revenue", "acme_cn", "FY2023", "777.7", Sensitivity.RESTRICTED),
]


def build(folder: Path, *, hidden: bool, default_entity: bool = False) -> Workspace:
    folder.mkdir(parents=True)
    glossary = example_glossary_text()
    if default_entity:
        glossary = glossary.replace('# default_entity = "acme"', 'default_entity = "acme"')
    (folder / "glossary.toml").write_text(glossary, encoding="utf-8")
    docs = folder.parent / "docs"  # one path for every workspace: locators name the file
    docs.mkdir(exist_ok=True)
    (docs / "annual.md").write_text(REPORT, encoding="utf-8")
    ws = Workspace.open(folder)
    ws.facts.write(FACTS + (HIDDEN if hidden else []))
    ws.ingest_documents([docs / "annual.md"], library="reports")
    if hidden:
        (docs / "zeppelin.md").write_text(SECRET_DOC, encoding="utf-8")
        ws.ingest_documents([docs / "zeppelin.md"], library="reports", sensitivity="restricted")
    return ws


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    return build(tmp_path / "ws", hidden=True)


def dump(answer: Answer) -> str:
    return json.dumps(answer.to_dict(timings=False), sort_keys=True, ensure_ascii=False)


QUESTIONS = {
    "structured": "What was ACME's revenue in FY2024?",
    "change": "How did ACME's revenue change from 2023 to 2024?",
    "latest": "What was ACME's revenue?",
    "composite": "Why did ACME's revenue rise in 2024?",
    "narrative": "Why did online demand grow?",
    "share": "ACME China revenue as a share of ACME revenue in 2024",
}


def test_a_structured_answer_is_rebuilt_from_the_fact(ws: Workspace) -> None:
    answer = ws.ask(QUESTIONS["structured"], principal=PUBLIC)
    assert answer.route == "structured" and answer.status is AnswerStatus.ANSWERED
    assert answer.text == "ACME Corp's Revenue in FY2024 was 179,260.3 US dollars. [1]"
    (figure,) = answer.figures
    assert figure.kind is FigureKind.FACT and figure.result is not None
    assert figure.result.value == Decimal("179260.3")
    data = answer.to_dict(timings=False)
    assert data["figures"][0]["value"] == "179260.3"  # type: ignore[index]
    assert data["figures"][0]["source_doc_id"] == "acme-FY2024.pdf"  # type: ignore[index]
    (source,) = data["sources"]  # type: ignore[misc]
    assert source["channel"] == "fact" and source["source_locator"] == "p. 4, revenue"
    assert "metric revenue" in answer.route_reason
    assert answer.trace.stage_names == ("answer:route", "answer:figures")


def test_a_change_shows_its_derivation(ws: Workspace) -> None:
    answer = ws.ask(QUESTIONS["change"], principal=PUBLIC)
    kinds = [f.kind for f in answer.figures]
    assert kinds == [FigureKind.FACT, FigureKind.FACT, FigureKind.CHANGE, FigureKind.PERCENT_CHANGE]
    change, percent = answer.figures[2:]
    assert change.expression == "179,260.3 \N{MINUS SIGN} 161,529.1"
    assert change.decimal_value == "17731.2"
    assert percent.expression == "(179,260.3 \N{MINUS SIGN} 161,529.1) / 161,529.1"
    assert "= 10.98 % (rounded; exactly" in percent.text
    assert [fact.source_doc_id for fact in percent.inputs] == ["acme-FY2023.pdf", "acme-FY2024.pdf"]
    assert percent.markers == (1, 2)


def test_comparisons_over_values_that_break_floats(ws: Workspace) -> None:
    answer = ws.ask("How did ACME's net income change from 2022 to 2024?", principal=PUBLIC)
    change, percent = answer.figures[-2:]
    assert change.decimal_value == "0.2"  # 0.3 - 0.1 is 0.19999999999999998 in floats
    assert percent.decimal_value == "200"  # 199.99999999999997 in floats
    average = ws.ask("average ACME net income in 2022, 2023 and 2024", principal=PUBLIC)
    assert average.figures[-1].kind is FigureKind.AVERAGE
    assert average.figures[-1].decimal_value == "0.2"  # 0.20000000000000004 in floats
    assert "(0.1 + 0.2 + 0.3) / 3 = 0.2 US dollars." in average.text
    assert 0.1 + 0.2 + 0.3 != 0.6  # the float trap the test is about


def test_a_share_and_a_ratio(ws: Workspace) -> None:
    share = ws.ask(QUESTIONS["share"], principal=PUBLIC)
    figure = share.figures[-1]
    assert figure.kind is FigureKind.SHARE
    assert figure.expression == "1,234.5 / 179,260.3"
    assert figure.to_dict()["fraction"] == "1234500/1792603"
    ratio = ws.ask("ratio of net income to revenue for ACME in 2024", principal=PUBLIC)
    assert ratio.figures[-1].kind is FigureKind.RATIO
    assert ratio.figures[-1].expression == "0.3 / 179,260.3"


def test_every_status(ws: Workspace, tmp_path: Path) -> None:
    refused = ws.ask("What was ACME's revenue in FY2019?", principal=PUBLIC)
    assert refused.status is AnswerStatus.REFUSED and refused.figures == ()
    assert refused.text == (
        "No stored fact matches this metric, entity and channel for FY2019, so no figure is given."
    )
    nothing = ws.ask("zeppelin helium logistics", principal=PUBLIC)
    assert nothing.route == "narrative" and nothing.status is AnswerStatus.REFUSED
    no_metric = ws.ask("ACME in 2024", principal=PUBLIC, channel="structured")
    assert no_metric.status is AnswerStatus.NEEDS_CLARIFICATION
    assert no_metric.text.startswith("Which metric?") and "stored for ACME Corp" in no_metric.text
    assert "Revenue" in no_metric.text  # the metrics ACME has facts for, not the whole glossary
    no_entity = ws.ask("revenue in 2024", principal=PUBLIC)
    assert no_entity.status is AnswerStatus.NEEDS_CLARIFICATION
    assert no_entity.text.startswith("Which entity?") and "ACME Corp" in no_entity.text
    bad_period = ws.ask("ACME revenue in FY2o24", principal=PUBLIC)
    assert bad_period.status is AnswerStatus.UNRECOGNIZED_PARAM and bad_period.param == "period"
    assert "FY2024" in bad_period.suggestions
    bad_entity = ws.ask("revenue in 2024", principal=PUBLIC, entity="acmee")
    assert bad_entity.status is AnswerStatus.UNRECOGNIZED_PARAM and bad_entity.param == "entity"
    assert bad_entity.suggestions[0] == "acme"


def test_defaults_are_stated_as_assumptions(ws: Workspace, tmp_path: Path) -> None:
    given = ws.ask("revenue in 2024", principal=PUBLIC, entity="ACME CN")
    assert given.assumptions == (
        "Entity: ACME China (the question names none; the entity given with it).",
    )
    assert given.figures[0].decimal_value == "1234.5"
    with_default = build(tmp_path / "default", hidden=False, default_entity=True)
    answer = with_default.ask("revenue in 2024", principal=PUBLIC)
    assert answer.assumptions == (
        "Entity: ACME Corp (the question names none; the workspace's default entity).",
    )
    latest = ws.ask(QUESTIONS["latest"], principal=PUBLIC)
    assert latest.assumptions == (
        "Period: FY2024 (the question names none; the latest period with a stored fact for "
        "Revenue of ACME Corp).",
    )
    assert "Assumptions:\n- Period: FY2024" in latest.text


def test_the_latest_period_is_computed_over_visible_facts_only(ws: Workspace) -> None:
    hidden_later = ws.ask(QUESTIONS["latest"], principal=PUBLIC)
    assert hidden_later.figures[0].decimal_value == "179260.3"  # not the confidential FY2025
    cleared = ws.ask(QUESTIONS["latest"], principal=Principal.of("confidential"))
    assert cleared.figures[0].decimal_value == "999999.9"
    assert "FY2025" in cleared.assumptions[0]


def test_restricted_facts_and_chunks_read_exactly_like_missing_ones(tmp_path: Path) -> None:
    present = build(tmp_path / "present", hidden=True)
    absent = build(tmp_path / "absent", hidden=False)
    questions = [
        *QUESTIONS.values(),
        "What was ACME China's revenue in 2023?",
        "How did ACME China's revenue change from 2023 to 2024?",
        "Why will ACME revenue collapse because of the lawsuit in 2024?",
        "Project Zeppelin lawsuit",
    ]
    for question in questions:
        for channel in ("auto", "structured", "narrative", "composite"):
            a = dump(present.ask(question, principal=PUBLIC, channel=channel))
            b = dump(absent.ask(question, principal=PUBLIC, channel=channel))
            assert a == b, (question, channel)
            assert (
                "999999" not in a
                and "777" not in a
                and "Zeppelin" not in a.replace("Zeppelin lawsuit", "")
            )


def test_a_composite_answer_has_figures_and_a_guarded_explanation(ws: Workspace) -> None:
    answer = ws.ask(QUESTIONS["composite"], principal=PUBLIC)
    assert answer.route == "composite" and answer.status is AnswerStatus.ANSWERED
    # the rise asked about is the change from the year before (stated as an assumption)
    assert answer.text.startswith("Figures:\nACME Corp's Revenue in FY2023 was 161,529.1")
    assert "ACME Corp's Revenue in FY2024 was 179,260.3" in answer.text
    assert "\n\nExplanation:\n" in answer.text
    channels = [s.kind.value for s in answer.sources]
    assert channels[0] == "fact" and "chunk" in channels
    assert channels == sorted(channels, key=lambda c: c != "fact")  # facts first
    assert [s.marker for s in answer.sources] == list(range(1, len(answer.sources) + 1))
    chunk_ids = [s.chunk_id for s in answer.sources if s.chunk_id]
    assert len(chunk_ids) == len(set(chunk_ids))  # de-duplicated
    # The press sentence contradicts the stored fact: flagged, never a figure.
    assert len(answer.flags) == 1 and "150000" in answer.flags[0]
    assert "179,260.3 US dollars" in answer.flags[0]
    assert [f.decimal_value for f in answer.figures][:3] == ["161529.1", "179260.3", "17731.2"]
    assert "answer:composite" in answer.trace.stage_names


def test_composite_sources_are_de_duplicated_across_sentences(ws: Workspace) -> None:
    answer = ws.ask("Why did ACME's revenue and net income rise in 2024?", principal=PUBLIC)
    facts = [s.fact for s in answer.sources if s.fact is not None]
    assert len(facts) == len(set(facts)) == 2
    chunks = [s.chunk_id for s in answer.sources if s.chunk_id is not None]
    assert len(chunks) == len(set(chunks)) >= 1
    assert all(m <= len(answer.sources) for s in answer.sentences for m in s.markers)


def _inventing(original):  # type: ignore[no-untyped-def]
    """A broken narrative part: it adds a sentence with an invented number, citing [1]."""

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        answer = original(*args, **kwargs)
        if not answer.sources:
            return answer
        invented = CitedSentence("ACME revenue reached 424,242 in FY2024.", (1,))
        return type(answer)(
            **{
                **{f: getattr(answer, f) for f in answer.__dataclass_fields__},
                "sentences": (*answer.sentences, invented),
            }
        )

    return broken


def test_an_invented_number_in_the_narrative_part_is_caught(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(router, "answer_from_snippets", _inventing(router.answer_from_snippets))
    answer = ws.ask(QUESTIONS["composite"], principal=PUBLIC)
    assert "424" not in dump(answer)
    assert "Some sentences were left out" in answer.text


@pytest.mark.xfail(strict=True, reason="a composite merge without the numeric guard leaks it")
def test_the_invented_number_leaks_without_the_guard(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragspine.answer import composite
    from ragspine.answer.guard import GuardReport

    monkeypatch.setattr(router, "answer_from_snippets", _inventing(router.answer_from_snippets))
    monkeypatch.setattr(composite, "check_numbers", lambda text, ev: GuardReport((), ()))
    test_an_invented_number_in_the_narrative_part_is_caught(ws, monkeypatch)


HISTORY = [
    ("user", "ACME revenue in FY2024 was 424,242 according to my notes."),
    ("assistant", "Noted: ACME China revenue 424242, net income 424,242.1 in 2024."),
]


@pytest.mark.parametrize("channel", ["auto", "structured", "narrative", "composite"])
@pytest.mark.parametrize("question", [*QUESTIONS.values(), "What was the revenue?"])
def test_history_is_never_a_source_a_figure_or_a_slot(
    ws: Workspace, channel: str, question: str
) -> None:
    answer = ws.ask(question, principal=PUBLIC, channel=channel, history=HISTORY)
    assert "424" not in dump(answer)
    assert dump(answer) == dump(ws.ask(question, principal=PUBLIC, channel=channel))


def test_history_gives_no_entity_or_period(ws: Workspace) -> None:
    answer = ws.ask(
        "What was the revenue?", principal=PUBLIC, channel="structured", history=HISTORY
    )
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION


@pytest.mark.xfail(strict=True, reason="a router reading slots from history is caught")
def test_reading_slots_from_history_is_caught(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        router, "slot_text", lambda q, turns: " ".join([q, *(t.text for t in turns)])
    )
    test_history_gives_no_entity_or_period(ws)


def test_bad_history_is_refused_by_name(ws: Workspace) -> None:
    from ragspine.errors import QueryError

    with pytest.raises(QueryError, match="role 'system' is not user or assistant"):
        ws.ask("revenue", principal=PUBLIC, history=[("system", "x")])
    with pytest.raises(QueryError, match="not a string"):
        ws.ask("revenue", principal=PUBLIC, history="hello")  # type: ignore[arg-type]


def test_italian_texts_and_numbers_from_the_same_decimal(ws: Workspace) -> None:
    answer = ws.ask(QUESTIONS["change"], principal=PUBLIC, locale="it")
    assert (
        answer.text.splitlines()[1] == "Revenue di ACME Corp nel FY2024: 179.260,3 dollari USA. [2]"
    )
    assert "(179.260,3 \N{MINUS SIGN} 161.529,1) / 161.529,1 = 10,98 % (arrotondato" in answer.text
    assert answer.to_dict()["figures"][1]["value"] == "179260.3"  # type: ignore[index]
    assert answer.render().splitlines()[-3] == "Fonti:"
    refused = ws.ask("What was ACME's revenue in FY2019?", principal=PUBLIC, locale="it")
    assert refused.text.startswith("Nessun fatto memorizzato") and "FY2019" in refused.text
    nothing = ws.ask("zeppelin helium logistics", principal=PUBLIC, locale="it")
    assert nothing.text == "Non è stato trovato materiale pertinente per questa domanda."


def test_the_workspace_locale_comes_from_the_glossary(tmp_path: Path) -> None:
    ws = build(tmp_path / "it", hidden=False)
    text = (ws.path / "glossary.toml").read_text("utf-8").replace('locale = "en"', 'locale = "it"')
    (ws.path / "glossary.toml").write_text(text, encoding="utf-8")
    reopened = Workspace.open(ws.path)
    assert "179.260,3" in reopened.ask(QUESTIONS["structured"], principal=PUBLIC).text
    assert "179,260.3" in reopened.ask(QUESTIONS["structured"], principal=PUBLIC, locale="en").text


def test_answers_are_deterministic(ws: Workspace) -> None:
    for question in QUESTIONS.values():
        assert dump(ws.ask(question, principal=PUBLIC)) == dump(ws.ask(question, principal=PUBLIC))


def test_the_command_line(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--workspace", str(ws.path)]
    assert main([*base, "ask", QUESTIONS["structured"], "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["route"] == "structured" and data["figures"][0]["value"] == "179260.3"
    assert main([*base, "ask", QUESTIONS["composite"]]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Figures:\n") and "Explanation:" in out and "Sources:" in out
    assert main([*base, "ask", "revenue in 2024", "--entity", "ACME CN", "--locale", "it"]) == 0
    assert "1.234,5 dollari USA" in capsys.readouterr().out
    assert main([*base, "ask", QUESTIONS["structured"], "--locale", "fr"]) == 2
    assert "unknown locale 'fr': use en, it" in capsys.readouterr().err
    assert main([*base, "ask", QUESTIONS["structured"], "--channel", "graph"]) == 2
    assert "unknown channel 'graph'" in capsys.readouterr().err
    assert main([*base, "ask", QUESTIONS["latest"], "--reference-date", "24-01"]) == 2
    assert "--reference-date '24-01'" in capsys.readouterr().err


def test_a_change_runs_from_its_base_period(ws: Workspace) -> None:
    """ "In 2024 from 2022" measures from 2022 whatever the order of mention; without a base
    word a change runs forward in time; an average over a span covers every year of it."""
    for question in (
        "What was the change in ACME's net income in 2024 from 2022?",
        "How did ACME's net income change between 2024 and 2022?",
    ):
        change = next(
            f for f in ws.ask(question, principal=PUBLIC).figures if f.kind is FigureKind.CHANGE
        )
        assert change.decimal_value == "0.2", question
    backwards = ws.ask("change in ACME's net income in 2022 from 2024", principal=PUBLIC)
    change = next(f for f in backwards.figures if f.kind is FigureKind.CHANGE)
    assert change.decimal_value == "-0.2"
    # "from 2024 to 2022" names a span back in time: the change runs forward, and says so
    spanned = ws.ask("change in ACME's net income from 2024 to 2022", principal=PUBLIC)
    change = next(f for f in spanned.figures if f.kind is FigureKind.CHANGE)
    assert change.decimal_value == "0.2"
    assert "Periods: FY2022 to FY2024 (the question names the later year first" in spanned.text
    for spelled in ("from FY2024 to FY2022", "from December 31, 2024 to December 31, 2022"):
        labelled = ws.ask(f"change in ACME's net income {spelled}", principal=PUBLIC)
        change = next(f for f in labelled.figures if f.kind is FigureKind.CHANGE)
        assert change.decimal_value == "0.2", spelled
        assert "Periods: FY2022 to FY2024" in labelled.text, spelled
    # a rise or a fall named back in time: which way the asker counts is asked (a review found
    # "the decline from 2019 to 2018" given with the opposite sign)
    for word in ("decline", "increase"):
        directed = ws.ask(f"the {word} in ACME's net income from 2024 to 2022", principal=PUBLIC)
        assert directed.status is AnswerStatus.NEEDS_CLARIFICATION, word
        assert "Which way? The question names FY2024 before FY2022." in directed.text
    span = ws.ask("average ACME net income from 2022 to 2024", principal=PUBLIC)
    assert span.figures[-1].kind is FigureKind.AVERAGE
    assert "(0.1 + 0.2 + 0.3) / 3 = 0.2 US dollars." in span.text


def test_a_passage_about_another_entity_does_not_explain_this_one(ws: Workspace) -> None:
    """The demo explained IP's operating profit with a sentence from a HIG filing. A passage
    whose document names another entity in its metadata is left out of an answer about one
    entity; a passage naming none (the annual report here), or one the glossary does not know,
    still counts."""
    docs = ws.path.parent / "docs"
    (docs / "china.md").write_text(
        "ACME revenue rose in FY2024 because online demand grew in China.\n", encoding="utf-8"
    )
    (docs / "rival.md").write_text(
        "ACME revenue rose in FY2024 because rivals raised prices, say analysts.\n",
        encoding="utf-8",
    )
    ws.ingest_documents([docs / "china.md"], library="reports", metadata={"entity": "ACME CN"})
    ws.ingest_documents([docs / "rival.md"], library="reports", metadata={"entity": "Rival"})
    answer = ws.ask(QUESTIONS["composite"], principal=PUBLIC)
    cited = " ".join(s.doc_id for s in answer.sources if s.chunk_id)
    assert "china.md" not in cited and "annual.md" in cited and "rival.md" in cited
    china = ws.ask("Why did ACME China revenue rise in 2024?", principal=PUBLIC)
    assert "china.md" in " ".join(s.doc_id for s in china.sources if s.chunk_id)


def test_passages_about_other_entities_do_not_crowd_out_this_ones(ws: Workspace) -> None:
    """A review found: the passages about another entity were left out after the search had
    cut its list, so six ACME China passages ranked above the ACME annual report left no
    explanation at all. A wider search now fills their places; a parent's passage (ACME
    Group for ACME Corp) still counts."""
    docs = ws.path.parent / "docs"
    for n in range(6):
        path = docs / f"china{n}.md"
        path.write_text(
            f"ACME revenue rose in FY2024 because online revenue rose and revenue grew {n}.\n",
            encoding="utf-8",
        )
        ws.ingest_documents([path], library="reports", metadata={"entity": "ACME CN"})
    (docs / "group.md").write_text(
        "ACME revenue rose in FY2024 because the group's online demand grew.\n", encoding="utf-8"
    )
    ws.ingest_documents([docs / "group.md"], library="reports", metadata={"entity": "ACME Group"})
    answer = ws.ask(QUESTIONS["composite"], principal=PUBLIC)
    cited = " ".join(s.doc_id for s in answer.sources if s.chunk_id)
    assert "china" not in cited
    assert "annual.md" in cited and "group.md" in cited
    # the trace says what was left out, and that the search looked wider
    first, wider = [s for s in answer.trace.stages if s.name == "about:entity"]
    assert first.dropped_by_filter >= 1 and first.candidates_out < first.candidates_in
    assert wider.dropped_by_filter == 6 and wider.candidates_out == wider.candidates_in - 6
    assert any("some were about another entity" in note for note in answer.trace.notes)
