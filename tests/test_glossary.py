from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragspine.analysis import match_key
from ragspine.errors import GlossaryError
from ragspine.glossary import (
    Glossary,
    TermType,
    load_glossary,
    load_glossary_texts,
    parse_glossary,
    render_glossary,
)
from ragspine.workspace import example_glossary_text

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.fixture()
def glossary():  # type: ignore[no-untyped-def]
    return parse_glossary(tomllib.loads(example_glossary_text()))


def test_matching_ignores_case_and_whitespace(glossary) -> None:  # type: ignore[no-untyped-def]
    assert glossary.metrics.resolve("  NET   Sales ") == "revenue"
    assert glossary.entities.resolve("acme") == "acme"
    assert glossary.channels.resolve("E-Commerce") == "online"
    assert glossary.channels.resolve("total") == "total"
    assert glossary.metrics.resolve("revenues") is None  # exact, never a guess


def test_find_terms_respects_word_boundaries(glossary) -> None:  # type: ignore[no-untyped-def]
    assert glossary.find_terms("a going concern for the board") == []
    hits = glossary.find_terms("Net sales of ACME CN via e-commerce")
    found = {(h.type, h.code) for h in hits}
    assert (TermType.METRIC, "revenue") in found
    assert (TermType.ENTITY, "acme_cn") in found  # longest match wins over "ACME"
    assert (TermType.ENTITY, "acme") not in found
    assert (TermType.CHANNEL, "online") in found


def test_a_spelling_without_a_letter_is_never_found() -> None:
    """A table row called ``$ 2014`` (a garbled header) became a metric with code ``2014``;
    found in questions, it took every year 2014 for itself."""
    text = example_glossary_text() + '\n[metrics.2014]\nlabel = "$ 2014"\n'
    glossary = parse_glossary(tomllib.loads(text))
    assert glossary.metrics.resolve("$ 2014") == "2014"  # still resolvable by name
    hits = glossary.find_terms("ACME net sales from 2014 to 2015, $ 2014")
    assert {(h.type, h.code) for h in hits} == {
        (TermType.ENTITY, "acme"),
        (TermType.METRIC, "revenue"),
    }


def test_alias_claimed_twice_names_both() -> None:
    doc = tomllib.loads(
        '[metrics.revenue]\nlabel="Revenue"\naliases=["sales"]\n'
        '[metrics.net_sales]\nlabel="Net sales"\naliases=["Sales"]\n'
    )
    with pytest.raises(GlossaryError, match=r"'revenue' and 'net_sales'"):
        parse_glossary(doc)


def test_bad_kind_and_unknown_parent_are_errors() -> None:
    with pytest.raises(GlossaryError, match="kind 'money'"):
        parse_glossary({"metrics": {"x": {"label": "X", "kind": "money"}}})
    with pytest.raises(GlossaryError, match="unknown parent 'nobody'"):
        parse_glossary({"entities": {"x": {"label": "X", "parent": "nobody"}}})


def test_render_round_trips(glossary, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "g.toml"
    path.write_text(render_glossary(glossary), encoding="utf-8")
    again = load_glossary(path)
    assert sorted(again.terms(), key=repr) == sorted(glossary.terms(), key=repr)
    assert again.fiscal_year_start_month == glossary.fiscal_year_start_month


def test_readme_glossary_example_loads() -> None:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    glossary_blocks = [b for b in blocks if "[metrics." in b]
    assert glossary_blocks, "README must show a full glossary example"
    glossary = parse_glossary(tomllib.loads(glossary_blocks[0]))
    assert glossary.metrics.terms and glossary.entities.terms and glossary.channels.terms


def fullwidth(text: str) -> str:
    """``text`` with ASCII letters and digits typed as their full-width forms."""
    return "".join(chr(ord(ch) + 0xFEE0) if ch.isalnum() else ch for ch in text)


def test_matching_normalizes_unicode_on_both_sides() -> None:
    doc = tomllib.loads(
        '[metrics.cafe_sales]\nlabel="Caf\\u00e9 sales"\naliases=["ventes cafe\\u0301"]\n'
    )
    glossary = parse_glossary(doc)
    for spelling in (
        "Cafe\u0301 sales",  # decomposed query, composed label
        "VENTES CAF\u00c9",  # composed query, decomposed alias
        fullwidth("CAFE") + "\u0301\u00a0sales",  # full-width letters and a no-break space
        "caf\u00e9\u200b sales",  # a zero-width space
    ):
        assert glossary.metrics.resolve(spelling) == "cafe_sales", spelling


def test_find_terms_normalizes_unicode(glossary) -> None:  # type: ignore[no-untyped-def]
    text = f"{fullwidth('Net')}\u00a0sales of {fullwidth('ACME')} via E\u2011commerce"
    found = {(h.type, h.code) for h in glossary.find_terms(text)}
    assert (TermType.METRIC, "revenue") in found
    assert (TermType.ENTITY, "acme") in found
    assert glossary.find_terms(fullwidth("concern")) == []


def test_labels_and_aliases_are_stored_in_display_form() -> None:
    doc = tomllib.loads(
        '[entities.cafe]\nlabel="Cafe\\u0301\\u202e Corp"\naliases=["A\\u200bCME"]\n'
    )
    (term,) = parse_glossary(doc).entities.terms.values()
    assert term.label == "Caf\u00e9 Corp"
    assert term.aliases == ("ACME",)


def test_suggestions_rank_by_closeness_and_break_ties_by_code() -> None:
    doc = tomllib.loads(
        '[metrics.cost_b]\nlabel="Cost B"\n[metrics.cost_a]\nlabel="Cost A"\n'
        '[metrics.costs]\nlabel="Total costs"\naliases=["costz"]\n'
    )
    metrics = parse_glossary(doc).metrics
    # "costz" (0.89) beats "cost a" / "cost b" (0.8 each, a tie the smaller code wins)
    assert metrics.suggest("cost") == ["costs", "cost_a", "cost_b"]
    assert metrics.suggest("cost", limit=2) == ["costs", "cost_a"]


def test_the_three_vocabularies_suggest_by_the_same_rule(glossary) -> None:  # type: ignore[no-untyped-def]
    from ragspine.text import closest

    for vocab, raw in (
        (glossary.metrics, "net sale"),
        (glossary.entities, "acme cm"),
        (glossary.channels, "e-comerce"),
    ):
        assert vocab.suggest(raw) == closest(raw, vocab.index.items())
        assert vocab.suggest(raw)


def test_a_huge_alias_in_an_error_is_quoted_short() -> None:
    alias = "s" * 5000
    doc = {"metrics": {"a": {"label": "A", "aliases": [alias]}, "b": {"label": alias}}}
    with pytest.raises(GlossaryError) as err:
        parse_glossary(doc)
    assert len(str(err.value)) < 300 and "(5000 characters)" in str(err.value)


# --- derivations (issue 13) ------------------------------------------------------------------


def _metrics(**derivations: str) -> dict[str, object]:
    return {
        "metrics": {
            code: ({"label": code, "derivation": text} if text else {"label": code})
            for code, text in derivations.items()
        }
    }


def test_a_metric_derivation_is_parsed_at_load() -> None:
    glossary = parse_glossary(_metrics(a="", b="", ratio="a / b * 100"))
    derivation = glossary.metrics.terms["ratio"].derivation
    assert derivation is not None and derivation.metrics() == ("a", "b")
    assert glossary.metrics.terms["a"].derivation is None


def test_a_bad_derivation_fails_at_load_naming_metric_and_position() -> None:
    with pytest.raises(GlossaryError) as caught:
        parse_glossary(_metrics(a="", ratio="a / / 2"))
    message = str(caught.value)
    assert "metrics.'ratio'" in message and "at position 5" in message


def test_a_derivation_naming_an_unknown_metric_fails_at_load() -> None:
    with pytest.raises(GlossaryError, match="derivation 'a - ghost' names unknown metric 'ghost'"):
        parse_glossary(_metrics(a="", diff="a - ghost"))


@pytest.mark.parametrize(
    ("derivations", "cycle"),
    [
        ({"a": "a + 1"}, "a -> a"),
        ({"a": "b * 2", "b": "c / 2", "c": "a - 1", "d": "a"}, "a -> b -> c -> a"),
    ],
)
def test_derivation_cycles_fail_at_load_naming_the_cycle(
    derivations: dict[str, str], cycle: str
) -> None:
    with pytest.raises(GlossaryError, match=f"metric derivations form a cycle: {cycle};"):
        parse_glossary(_metrics(**derivations))


def test_only_metrics_take_a_derivation() -> None:
    with pytest.raises(GlossaryError, match="only metrics take a derivation"):
        parse_glossary({"entities": {"x": {"label": "X", "derivation": "a + b"}}})
    with pytest.raises(GlossaryError, match="derivation must be a string"):
        parse_glossary({"metrics": {"x": {"label": "X", "derivation": 3}}})


def test_a_derivation_may_name_metrics_of_another_file(tmp_path: Path) -> None:
    (tmp_path / "glossary.toml").write_text(
        '[metrics.margin]\nlabel = "Margin"\nderivation = "profit / [net-sales]"\n',
        encoding="utf-8",
    )
    (tmp_path / "generated.toml").write_text(
        '[metrics.profit]\nlabel = "Profit"\n[metrics.net-sales]\nlabel = "Net sales"\n',
        encoding="utf-8",
    )
    glossary = load_glossary(tmp_path / "glossary.toml", tmp_path / "generated.toml")
    derivation = glossary.metrics.terms["margin"].derivation
    assert derivation is not None and derivation.metrics() == ("profit", "net-sales")
    with pytest.raises(GlossaryError, match="names unknown metric 'profit'"):
        load_glossary(tmp_path / "glossary.toml")


def test_render_glossary_keeps_derivations_and_odd_characters() -> None:
    glossary = parse_glossary(
        {
            "metrics": {
                "a": {"label": 'Quote " and back\\slash'},
                "b": {"label": "B"},
                "c": {"label": "C", "derivation": "(a +\n b) / 2"},
            }
        }
    )
    again = parse_glossary(tomllib.loads(render_glossary(glossary)))
    assert again == glossary
    derivation = again.metrics.terms["c"].derivation
    assert derivation is not None and derivation.text == "(a +\n b) / 2"


def _find_terms_by_regex(glossary: Glossary, text: str) -> list[tuple[str, str, int, int]]:
    """The reference: one regular expression of every spelling, longest first, on word
    boundaries (how ``find_terms`` worked before its index)."""
    owners: dict[str, tuple[TermType, str]] = {}
    for vocab in (glossary.metrics, glossary.entities, glossary.channels):
        for key, code in vocab.index.items():
            owners.setdefault(key, (vocab.type, code))
    spellings = sorted(owners, key=lambda s: (-len(s), s))
    alternation = "|".join(r"\s+".join(map(re.escape, s.split())) for s in spellings)
    pattern = re.compile(rf"(?<!\w)(?:{alternation})(?!\w)")
    hits = []
    for match in pattern.finditer(match_key(text)):
        term_type, code = owners[" ".join(match.group(0).split())]
        hits.append((term_type.value, code, match.start(), match.end()))
    return hits


TRICKY = """
[metrics.revenue]
label = "Revenue"
aliases = ["net sales", "sales", "e-commerce sales", "inc.", "(1) revenue", "sales growth"]
[metrics.cost]
label = "Cost"
aliases = ["c", "costs of sales"]
[entities.acme]
label = "ACME"
aliases = ["ACME CN", "cn", "acme's", "Café"]
[channels.web]
label = "Web"
aliases = ["e-commerce", "web sales"]
"""


@settings(max_examples=300)
@given(
    st.lists(
        st.sampled_from(
            [
                "net",
                "sales",
                "e-commerce",
                "inc.",
                "(1)",
                "revenue",
                "acme",
                "cn",
                "'s",
                "c",
                "concern",
                "café",
                "growth",
                "of",
                "costs",
                "web",
                ",",
                ".",
                " ",
                "-",
                "_",
                "x",
            ]
        ),
        max_size=14,
    ).map(lambda words: " ".join(words))
)
def test_find_terms_agrees_with_one_regular_expression(text: str) -> None:
    glossary = parse_glossary(tomllib.loads(TRICKY))
    found = [(h.type.value, h.code, h.start, h.end) for h in glossary.find_terms(text)]
    assert found == _find_terms_by_regex(glossary, text)


def test_terms_of_a_generated_text_are_marked_so() -> None:
    """Only the texts named as generated (an importer's ``glossary.d/`` file) mark their terms:
    the router reads a hand-edited metric per company and an importer's row name as a row."""
    own = ("glossary.toml", '[metrics.cash]\nlabel = "Cash"\n')
    made = ("glossary.d/tatqa.toml", '[metrics.cash_eq]\nlabel = "Cash and cash equivalents"\n')
    glossary = load_glossary_texts(own, made, generated={made[0]})
    assert not glossary.metrics.terms["cash"].generated
    assert glossary.metrics.terms["cash_eq"].generated
    assert not load_glossary_texts(own, made).metrics.terms["cash_eq"].generated


def test_a_derivation_or_a_tree_too_deep_to_walk_is_refused_at_load() -> None:
    """A review: 'revenue + 1 + 1 + ...' (500 terms, within the length limit) and a chain of
    600 entities crashed derive and roll-up with a RecursionError (exit 1)."""
    chain = " + ".join(["revenue"] + ["1"] * 400)
    text = '[metrics.revenue]\nlabel = "Revenue"\n[metrics.ones]\nlabel = "Ones"\n'
    text += f'derivation = "{chain}"\n'
    with pytest.raises(GlossaryError, match="nests more than 64 operations"):
        parse_glossary(tomllib.loads(text))
    entities = "".join(
        f'[entities.e{n}]\nlabel = "E{n}"\n' + (f'parent = "e{n - 1}"\n' if n else "")
        for n in range(150)
    )
    with pytest.raises(GlossaryError, match="'e100' is more than 100 parents deep"):
        parse_glossary(tomllib.loads(entities))
    fine = "".join(
        f'[entities.f{n}]\nlabel = "F{n}"\n' + (f'parent = "f{n - 1}"\n' if n else "")
        for n in range(100)
    )
    assert len(parse_glossary(tomllib.loads(fine)).entities.terms) == 100
