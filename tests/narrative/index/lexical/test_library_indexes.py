"""Per-library index upkeep: each field set's terms come from analyzing each field once."""

from __future__ import annotations

import pytest

from ragspine.analysis import Analyzer
from ragspine.narrative.index.lexical.library_indexes import AnalyzedRows, IndexFields, indexed_text
from ragspine.stores.chunks import IndexRow

ROWS = [
    IndexRow(1, "Quarterly Report", "Revenue > EMEA", "Revenue grew 3.5% to 1,200 million.", 0),
    IndexRow(2, "Quarterly Report", "", "Costs fell; Umsätze stiegen.", 1),
    IndexRow(3, "", "東京", "売上高は増加した 12,5", 2),
    IndexRow(4, "Memo", "Memo", "", 0),
]


@pytest.mark.parametrize("fields", list(IndexFields))
@pytest.mark.parametrize("analyzer", [Analyzer(), Analyzer(language=None, stopwords=False)])
def test_analyzed_rows_give_the_terms_of_each_indexed_text(
    fields: IndexFields, analyzer: Analyzer
) -> None:
    analyzed = AnalyzedRows(ROWS)
    expected = [analyzer.tokens(indexed_text(fields, row)) for row in ROWS]
    assert analyzed.tokens(analyzer, fields) == expected
    assert analyzed.tokens(analyzer, fields) == expected  # asked again: the same, not doubled


def test_a_field_set_without_heading_terms_shares_the_batch_of_title_and_text() -> None:
    rows = [IndexRow(1, "Title", "", "Some text here", 0), IndexRow(2, "T", "", "More", 0)]
    analyzed = AnalyzedRows(rows)
    shared = analyzed.batch(Analyzer(), IndexFields.TITLE_TEXT)
    assert analyzed.batch(Analyzer(), IndexFields.TITLE_HEADING_TEXT) is shared
    with_heading = AnalyzedRows(ROWS)
    batch = with_heading.batch(Analyzer(), IndexFields.TITLE_HEADING_TEXT)
    assert batch is not with_heading.batch(Analyzer(), IndexFields.TITLE_TEXT)
    expected = [Analyzer().tokens(indexed_text(IndexFields.TITLE_HEADING_TEXT, r)) for r in ROWS]
    assert batch.lengths.tolist() == [len(tokens) for tokens in expected]
    assert [batch.terms[i] for i in batch.term_ids] == [t for tokens in expected for t in tokens]
