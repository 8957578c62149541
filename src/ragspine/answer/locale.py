"""The locale table of answers: every fixed text ``ask`` writes, and numbers per locale.

English and Italian are shipped. A workspace chooses one in its glossary (``[answers] locale``),
a call may choose another (``--locale``). Numbers are written from the same ``Decimal`` in each
locale (``1,234.5`` in English, ``1.234,5`` in Italian) and never rounded except where an exact
value has no finite decimal form, which the text then says; JSON keeps the decimal string.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from enum import StrEnum

from ragspine.errors import QueryError, quote_input
from ragspine.glossary import ANSWER_LOCALES, MetricKind
from ragspine.graph.values import EXACT, TEXT_PLACES, ExactNumber
from ragspine.periods import UNDATED
from ragspine.structured.facts import Scale
from ragspine.structured.query import UNDATED_PHRASE, currency_name, not_found_text


class Locale(StrEnum):
    EN = "en"
    IT = "it"


def parse_locale(raw: str | Locale | None, default: Locale = Locale.EN) -> Locale:
    """``raw`` as a :class:`Locale` (``None``: ``default``); an unknown one names the valid."""
    if raw is None:
        return default
    try:
        return Locale(raw)
    except ValueError:
        valid = ", ".join(locale.value for locale in Locale)
        raise QueryError(f"unknown locale {quote_input(str(raw))}: use {valid}") from None


_EN: dict[str, str] = {
    "no_material": "No relevant material was found for this question.",
    "numbers_left_out": (
        "Some sentences were left out because their numbers do not appear in the cited passage."
    ),
    "fact": "{entity}'s {metric}{channel} in {period} was {amount}.",
    "missing_row": "{entity}, {period}: no stored fact for {metric}{channel}.",
    "no_period": (
        "No stored fact matches this metric, entity and channel for any period, "
        "so no figure is given."
    ),
    "change": "Change in {entity}'s {metric}{channel} from {earlier} to {later}",
    "percent_change": "Percentage change in {entity}'s {metric}{channel} from {earlier} to {later}",
    "decrease": "Decrease in {entity}'s {metric}{channel} from {earlier} to {later}",
    "percent_decrease": (
        "Percentage decrease in {entity}'s {metric}{channel} from {earlier} to {later}"
    ),
    "change_across": "Change in {metric}{channel} from {earlier} to {later}",
    "percent_change_across": "Percentage change in {metric}{channel} from {earlier} to {later}",
    "decrease_across": "Decrease in {metric}{channel} from {earlier} to {later}",
    "percent_decrease_across": (
        "Percentage decrease in {metric}{channel} from {earlier} to {later}"
    ),
    "average": "Average of {metric}{channel} over {items}",
    "sum": "Sum of {metric}{channel} over {items}",
    "difference": "Difference {metric}{channel} in {items}",
    "select_all": "Periods with a stored figure for {entity}'s {metric}{channel}",
    "covered_periods": "Periods with stored figures for {entity}: {periods}",
    "select_highest": "Period(s) of {entity}'s highest {metric}{channel}",
    "select_lowest": "Period(s) of {entity}'s lowest {metric}{channel}",
    "select_above": "Periods in which {entity}'s {metric}{channel} was above the value asked",
    "select_below": "Periods in which {entity}'s {metric}{channel} was below the value asked",
    "select_unread": "Periods in which {entity}'s {metric}{channel} passes the value asked",
    "select_above_or_equal": (
        "Periods in which {entity}'s {metric}{channel} was at or above the value asked"
    ),
    "select_below_or_equal": (
        "Periods in which {entity}'s {metric}{channel} was at or below the value asked"
    ),
    "select_count": "{what}: {count} of {total} periods ({periods}).",
    "select_negative": (
        "In value or in size? {entity}'s {metric}{channel} has negative values: the {pick} in "
        "value is {by_value}, the {size} in size {by_size}."
    ),
    "sign_as_stored": (
        "As stored or in size? No stored value of {entity}'s {metric}{channel} is positive: the "
        "{what} above is computed from the values as stored; from their sizes it has the "
        "opposite sign."
    ),
    "difference_direction": (
        "Which way? A difference between {earlier} and {later} names no direction: the change "
        "above runs from {earlier} to {later} and is negative; as the gap between the two, "
        "{entity}'s {metric}{channel} in {earlier} exceeds {later} by the same figure without "
        "its minus sign. Ask for the change from one period to the other."
    ),
    "sign_what_change": "change (the percentage change is the same either way)",
    "already_changes": (
        "Already a change? {metric} is read as {heading!r}: each of its figures above is that "
        "period's change, so no change between them is computed. Ask for the figure of the "
        "period itself."
    ),
    "sign_mixed": (
        "As stored or in size? One of the two figures is stored negative and the other "
        "positive: the result above divides the values as stored; from their sizes it has the "
        "opposite sign."
    ),
    "sign_what_average": "average",
    "sign_what_sum": "sum",
    "select_negative_threshold": (
        "In value or in size? {entity}'s {metric}{channel} has negative values: the periods "
        "{side} the value asked are {by_value} in value, {by_size} in size."
    ),
    "side_above": "above",
    "side_below": "below",
    "reason_threshold_unread": (
        "the value asked is not written in a form read here (digits grouped by a space or a "
        "dot, or a decimal comma); write it as 1,000 or 1000, with a decimal point"
    ),
    "reason_threshold_range": (
        "the question gives a range or two bounds, and one bound at a time is read here; ask "
        "for the periods above one value, then for those below the other"
    ),
    "pick_highest": "highest",
    "pick_lowest": "lowest",
    "size_highest": "largest",
    "size_lowest": "smallest",
    "no_period_selected": "none",
    "reason_scale_not_stated": (
        "the question names a scale (thousand, million, ...) and the stored values state none"
    ),
    "share": "{numerator} as a percentage of {denominator}",
    "ratio": "Ratio of {numerator} to {denominator}",
    "not_computable": "{what}: not computable ({reason}).",
    "reason_missing": "some of its inputs have no stored fact",
    "reason_percent_sum": "percentages of different periods do not add up to a figure",
    "reason_one_period": "only one period has a stored fact, so there is nothing to pick among",
    "reason_zero": "the value it divides by is zero",
    "reason_units": "its inputs are in different units",
    "reason_scale": "the scale of its inputs is not stated in their source, or not in one source",
    "scale_unstated": "(scale not stated in the source)",
    "reason_part_exceeds_whole": (
        "the first figure is larger than the second, so it is no share of it; say which "
        "figure is the whole"
    ),
    "components_under": "{count} rows are read under '{heading}' in {entity}'s table",
    "components_of_total": "{count} rows right above {total} in {entity}'s table add up to it",
    "components_rule": (
        "Rows: those read under the heading named, in table order, up to the row that totals "
        "them; or, for a row named, the fewest rows right above it that add up to it in every "
        "period stored. Rows you may not see are neither listed nor counted."
    ),
    "start_to_end": (
        "From which figure to which? The question runs from the start of a period to its end, "
        "and a change over time compares {metrics} with itself across periods, not an "
        "opening figure with a closing one. Ask for the opening and the closing rows by name, "
        "or for the change in the closing figure from the year before."
    ),
    "opening_asked": (
        "At the start or at the end? The question asks for a figure at the start of a period, "
        "and the figures stored for {metrics} are each period's closing ones (or its flow): the "
        "opening balance of a year is the closing one of the year before. Ask for the end of "
        "the year before, or for a row named as an opening balance."
    ),
    "first_day_stored": (
        "At the start or at the end? The figure stored for {metrics} in {periods} was read "
        "from a column headed by that year's first day, so it is an opening figure, not the "
        "year's. Ask for it at that first day, or for the end of the year before."
    ),
    "other_day_stored": (
        "Which day? The figure stored for {metrics} in {periods} was read at another day of "
        "that year (its source's column or row names it), not {asked}, the day the question "
        "names. Ask for it in "
        "{periods} to have it with its source and its day, or for the figure of {asked} from a "
        "source that states it."
    ),
    "count_negative": (
        "As stored or in size? The question asks for a number of things, which is never "
        "negative, and {metric} is stored negative above, a sign its table gives it (a "
        "decrease, a movement out). The figure is shown as stored; its size is the count."
    ),
    "two_days_one_year": (
        "Which day? The question names {first} and {last}, two days of {period}, and the "
        "figures stored for a year are that year's (at its end, or over it): the two days "
        "cannot be told apart. Ask for each figure by its year."
    ),
    "difference_of_metrics": (
        "Which way? A difference between {first} and {second} names no direction: {first} "
        "less {second}, above, is negative; as the gap between the two, {second} exceeds "
        "{first} by the same figure without its minus sign. Ask for "
        "{second} less {first} to get the gap."
    ),
    "reason_negative_operand": (
        "a figure in it is stored as a negative amount (the table may already subtract it); "
        "say which sign is meant"
    ),
    "subtrahend_missing": (
        "The question subtracts a figure that has no stored fact: no difference is given."
    ),
    "span_not_stored": (
        "Which years? The question names a span of {span} years but not its years, and the "
        "periods it would take are {periods}. Name the first and the last year."
    ),
    "duration_not_stored": (
        "The question asks for a length of time, and {metric} is stored as an amount: no "
        "length of time is given."
    ),
    "change_backward": (
        "Which way? The question names {later} before {earlier}. Ask for the change from "
        "{earlier} to {later}, or for {earlier} compared to {later}."
    ),
    "change_from_only": (
        "To which period? The question names only {period}, the period the change runs from. "
        "Ask for the change from {period} to a later period."
    ),
    "change_nested": (
        "Which calculation? {inner} is part of {outer}: a change, a sum or an average over both "
        "would count {inner} twice or compare a part with its whole. Ask for each figure, or "
        "for periods of one kind."
    ),
    "threshold_units": (
        "In which scale is {threshold}? {metric}'s figures are stored in {scale}, and the "
        "question names no scale for {threshold}: ask again with the scale after the number "
        "(such as {scale})."
    ),
    "change_one_part": (
        "From which period? The question names one, {period}, and a change in it may run from "
        "the period before or from the same period a year earlier. Name both periods."
    ),
    "average_one_part": (
        "Over which periods? The question names one, {period}, and an average needs several. "
        "Name the first and the last period."
    ),
    "since_only": (
        "Up to which period? The question names only {period}, the period it runs from, and "
        "no figure of {period} alone answers it. Name the first and the last year."
    ),
    "assume_forward": (
        "Periods: {earlier} to {later} (the question names the later year first; a change runs "
        "forward in time)."
    ),
    "several_channels": (
        "Which channel? The question names several ({channels}), and a calculation is "
        "computed here over the figures of one channel. Ask for it in each channel in turn; "
        "the figures of every channel named are given when asked for without a calculation."
    ),
    "assume_day_of_year": (
        "Day: {asked} is read as {periods}, the fiscal year holding it. In this workspace's "
        "calendar {periods} ends on another day, and the figure stored for {metrics} in "
        "{periods} is stored by year, not at a day: it is the figure of {asked} only if its "
        "source's year ends then."
    ),
    "assume_early_year_end": (
        "Years: a figure from a column dated in January or February is of the calendar year "
        "of that date, as the source's header dates it; many retailers name such a year by the "
        "year it starts in, one year earlier."
    ),
    "total_or_each": (
        "Each year or their sum? {metric} is a total itself, and the question asks for a total "
        "over several years. Ask for {metric} in each year, or for the sum of {metric} over "
        "them."
    ),
    "two_operations": (
        "The question asks for two calculations at once ({words}): one answer computes one. "
        "Ask for each in turn."
    ),
    "crossed_periods": (
        "Which year for each figure? The question names a year of its own for each figure of "
        "its {word}, and a share or a ratio is computed here within one year. Ask for both "
        "figures in one year, or for each figure in turn."
    ),
    "entities_and_periods": (
        "Which to combine? The question names several companies ({entities}) and several "
        "periods: ask for each company over the periods, or for the companies in one period."
    ),
    "crossed_entities": (
        "Which company for each figure? The question names a company of its own for each "
        "figure of its {word}, and a share or a ratio is computed here within one company. "
        "Ask for both figures of one company, or for each figure in turn."
    ),
    "one_figure_summed": (
        "The question asks to add ({word}) but names one figure: name each figure to add, or "
        "the periods to add it over."
    ),
    "percent_not_stored": (
        "The question asks for a percentage, and {metric} is stored as an amount, not a "
        "percentage: no percentage is given. Ask for it as a share of another figure (X as a "
        "percentage of Y)."
    ),
    "rounded": "rounded; exactly {fraction}",
    "assume_entity_call": "Entity: {entity} (the question names none; the entity given with it).",
    "assume_entity_default": (
        "Entity: {entity} (the question names none; the workspace's default entity)."
    ),
    "assume_period_latest": (
        "Period: {period} (the question names none; the latest period with a stored fact for "
        "{metric} of {entity})."
    ),
    "assume_undated": (
        "Period: none stated (the question names none, and {metric} of {entity} is stored only "
        "from a table that states no period)."
    ),
    "undated_over_time": (
        "{entity}'s {metric}{channel} is stored only from a table that states no period: no "
        "change, average or sum over periods can be computed from it."
    ),
    "undated_period": UNDATED_PHRASE,
    "undated_mixed": (
        "An undated figure has no place in time: no change, average or sum is computed between "
        "it and a dated one. Ask for each figure, or for dated periods only."
    ),
    "needs_metric": (
        "Which metric? The question names none that the glossary knows. Known metrics include: "
        "{examples}."
    ),
    "needs_entity": (
        "Which entity? The question names none and no default entity is set (--entity, or "
        "default_entity under [answers] in the glossary). Known entities include: {examples}."
    ),
    "ambiguous_metric": (
        "Which figure? The question fits these stored metrics without naming one of them "
        "exactly: {candidates}. Name the one meant."
    ),
    "unexplained_words": (
        "Which figure? The question matches {metrics}, but also says {words}, which its "
        "stored name does not say. Name the figure as stored."
    ),
    "needs_stored_metric": (
        "Which metric? The question names none of the metrics stored for {entity}, which "
        "include: {examples}."
    ),
    "no_stored_metric": (
        "Which metric? No figure is stored for {entity} that can be shown, so the question "
        "cannot be answered from stored facts."
    ),
    "question_constant": (
        "The question asks to combine these figures with a number it gives ({words}); answers "
        "are computed from stored facts only, so that step is not taken."
    ),
    "not_computed_here": (
        "The question asks for a calculation that is not computed here ({words}); the figures "
        "it would use are shown, and no result is given."
    ),
    "assume_average_year": (
        "Periods: {earlier} and {later} (the average of one year: of its value and the year "
        "before's, as for an average balance)."
    ),
    "assume_year_before": (
        "Periods: {earlier} to {later} (the question names one year; a change in it runs from "
        "the year before)."
    ),
    "assume_periods_all": (
        "Periods: {periods} (the question names none; every period with a stored fact for "
        "{metric} of {entity}, of the kind of the latest: years, quarters or months)."
    ),
    "assume_periods_latest_two": (
        "Periods: {periods} (the question names none; the two latest periods with a stored "
        "fact for {metric} of {entity})."
    ),
    "needs_two_metrics": (
        "Which two metrics? A share or a ratio needs two; the question names one ({metric}). "
        "Known metrics include: {examples}."
    ),
    "one_metric_select": (
        "Which metric? The periods are picked by one metric's values, and the question names "
        "several: {metrics}."
    ),
    "one_metric_only": (
        "Which metric? A change, an average or a sum is computed over one metric, and the "
        "question names several: {metrics}."
    ),
    "needs_two_items": (
        "Between what? A change needs two periods or two entities; the question names one."
    ),
    "unrecognized": "RAGSpine does not recognize the {param} {raw}.",
    "param_metric": "metric",
    "param_entity": "entity",
    "param_period": "period",
    "param_channel": "channel",
    "hint_close": " Known values close to it: {values}.",
    "hint_periods": " Periods look like {values}.",
    "contradiction": (
        "Passage [{marker}] gives {numbers} for {metric} of {entity} in {period}, which differs "
        "from the stored fact ({amount}): the figures use the stored fact only."
    ),
    "heading_figures": "Figures:",
    "heading_explanation": "Explanation:",
    "heading_assumptions": "Assumptions:",
    "heading_flags": "Flags:",
    "heading_sources": "Sources:",
    "percent": "percent",
    "percentage_points": "percentage points",
    "thousand": "thousand",
    "million": "million",
    "billion": "billion",
    "no_supported_answer": (
        "No supported answer: no sentence of the model's reply cites a given source with only "
        "the numbers it holds. The sources it was given are listed below."
    ),
    "model_left_out": (
        "Some sentences of the model's reply were left out: they cited no given source, or "
        "stated numbers that their cited passages and the found facts do not hold."
    ),
    "model_cut_short": "The model's reply was cut short; only its complete sentences were read.",
}

_IT: dict[str, str] = {
    "no_material": "Non è stato trovato materiale pertinente per questa domanda.",
    "numbers_left_out": (
        "Alcune frasi sono state omesse perché i loro numeri non compaiono nel passaggio citato."
    ),
    "fact": "{metric}{channel} di {entity} nel {period}: {amount}.",
    "missing_row": "{entity}, {period}: nessun fatto memorizzato per {metric}{channel}.",
    "no_period": (
        "Nessun fatto memorizzato corrisponde a questa metrica, entità e canale per alcun "
        "periodo, quindi non viene dato alcun valore."
    ),
    "change": "Variazione di {metric}{channel} di {entity} da {earlier} a {later}",
    "percent_change": (
        "Variazione percentuale di {metric}{channel} di {entity} da {earlier} a {later}"
    ),
    "decrease": "Calo di {metric}{channel} di {entity} da {earlier} a {later}",
    "percent_decrease": "Calo percentuale di {metric}{channel} di {entity} da {earlier} a {later}",
    "change_across": "Variazione di {metric}{channel} da {earlier} a {later}",
    "percent_change_across": "Variazione percentuale di {metric}{channel} da {earlier} a {later}",
    "decrease_across": "Calo di {metric}{channel} da {earlier} a {later}",
    "percent_decrease_across": "Calo percentuale di {metric}{channel} da {earlier} a {later}",
    "average": "Media di {metric}{channel} su {items}",
    "sum": "Somma di {metric}{channel} su {items}",
    "difference": "Differenza {metric}{channel} nel {items}",
    "select_all": "Periodi con un valore memorizzato per {metric}{channel} di {entity}",
    "covered_periods": "Periodi con valori memorizzati per {entity}: {periods}",
    "select_highest": "Periodo/i con il valore più alto di {metric}{channel} di {entity}",
    "select_lowest": "Periodo/i con il valore più basso di {metric}{channel} di {entity}",
    "select_above": "Periodi in cui {metric}{channel} di {entity} supera il valore indicato",
    "select_below": ("Periodi in cui {metric}{channel} di {entity} è inferiore al valore indicato"),
    "select_unread": "Periodi in cui {metric}{channel} di {entity} supera il valore indicato",
    "select_above_or_equal": (
        "Periodi in cui {metric}{channel} di {entity} è pari o superiore al valore indicato"
    ),
    "select_below_or_equal": (
        "Periodi in cui {metric}{channel} di {entity} è pari o inferiore al valore indicato"
    ),
    "select_count": "{what}: {count} su {total} periodi ({periods}).",
    "select_negative": (
        "Per valore o per grandezza? {metric}{channel} di {entity} ha valori negativi: il {pick} "
        "per valore è {by_value}, il {size} per grandezza {by_size}."
    ),
    "sign_as_stored": (
        "Come memorizzato o per grandezza? Nessun valore memorizzato di {metric}{channel} di "
        "{entity} è positivo: {what} sopra è calcolata dai valori come memorizzati; dalle loro "
        "grandezze ha il segno opposto."
    ),
    "difference_direction": (
        "In quale verso? Una differenza tra {earlier} e {later} non ha verso: la variazione "
        "sopra va da {earlier} a {later} ed è negativa; come scarto tra i due, {metric}{channel} "
        "di {entity} nel {earlier} supera {later} della stessa cifra senza il segno meno. "
        "Chiedere la variazione da un periodo all'altro."
    ),
    "sign_what_change": "la variazione (la variazione percentuale è la stessa in ogni caso)",
    "already_changes": (
        "È già una variazione? {metric} è letto come {heading!r}: ciascun valore sopra è la "
        "variazione del suo periodo, quindi nessuna variazione tra di essi è calcolata. Chiedi "
        "il valore del periodo stesso."
    ),
    "sign_mixed": (
        "Come memorizzato o per grandezza? Uno dei due valori è memorizzato negativo e l'altro "
        "positivo: il risultato sopra divide i valori come memorizzati; dalle loro grandezze ha "
        "il segno opposto."
    ),
    "sign_what_average": "la media",
    "sign_what_sum": "la somma",
    "select_negative_threshold": (
        "Per valore o per grandezza? {metric}{channel} di {entity} ha valori negativi: i periodi "
        "{side} il valore indicato sono {by_value} per valore, {by_size} per grandezza."
    ),
    "side_above": "sopra",
    "side_below": "sotto",
    "reason_threshold_unread": (
        "il valore indicato non è scritto in una forma letta qui (cifre separate da uno spazio o "
        "da un punto, o una virgola decimale); scriverlo come 1,000 o 1000, con il punto decimale"
    ),
    "reason_threshold_range": (
        "la domanda indica un intervallo o due limiti, e qui si legge un limite alla volta; "
        "chiedere i periodi sopra un valore, poi quelli sotto l'altro"
    ),
    "pick_highest": "più alto",
    "pick_lowest": "più basso",
    "size_highest": "più grande",
    "size_lowest": "più piccolo",
    "no_period_selected": "nessuno",
    "reason_scale_not_stated": (
        "la domanda indica una scala (migliaia, milioni, ...) e i valori memorizzati non ne "
        "indicano alcuna"
    ),
    "ambiguous_metric": (
        "Quale valore? La domanda si adatta a queste metriche memorizzate senza nominarne "
        "una esattamente: {candidates}. Indicare quella intesa."
    ),
    "unexplained_words": (
        "Quale valore? La domanda corrisponde a {metrics}, ma dice anche {words}, che il suo "
        "nome memorizzato non dice. Indicare il valore come memorizzato."
    ),
    "needs_stored_metric": (
        "Quale metrica? La domanda non nomina alcuna delle metriche memorizzate per {entity}, "
        "tra cui: {examples}."
    ),
    "no_stored_metric": (
        "Quale metrica? Per {entity} non è memorizzato alcun valore che si possa mostrare, "
        "quindi la domanda non trova risposta nei fatti memorizzati."
    ),
    "question_constant": (
        "La domanda chiede di combinare questi valori con un numero che indica essa stessa "
        "({words}); le risposte si calcolano solo da fatti memorizzati, quindi quel passaggio "
        "non viene fatto."
    ),
    "not_computed_here": (
        "La domanda chiede un calcolo che qui non si esegue ({words}); sono mostrati i valori "
        "che userebbe, senza alcun risultato."
    ),
    "assume_average_year": (
        "Periodi: {earlier} e {later} (la media di un anno: del suo valore e di quello "
        "dell'anno precedente, come per un saldo medio)."
    ),
    "assume_year_before": (
        "Periodi: da {earlier} a {later} (la domanda nomina un solo anno; una variazione in "
        "quell'anno parte dall'anno precedente)."
    ),
    "assume_periods_all": (
        "Periodi: {periods} (la domanda non ne nomina; ogni periodo con un fatto memorizzato "
        "per {metric} di {entity}, del tipo dell'ultimo: anni, trimestri o mesi)."
    ),
    "assume_periods_latest_two": (
        "Periodi: {periods} (la domanda non ne nomina; gli ultimi due periodi con un fatto "
        "memorizzato per {metric} di {entity})."
    ),
    "share": "{numerator} in percentuale di {denominator}",
    "ratio": "Rapporto tra {numerator} e {denominator}",
    "not_computable": "{what}: non calcolabile ({reason}).",
    "reason_missing": "alcuni dati di partenza non hanno un fatto memorizzato",
    "reason_percent_sum": "le percentuali di periodi diversi non si sommano in un dato",
    "reason_one_period": (
        "un solo periodo ha un fatto memorizzato, quindi non c'è nulla da scegliere"
    ),
    "reason_zero": "il divisore è zero",
    "reason_units": "i dati di partenza hanno unità diverse",
    "reason_scale": "la scala dei dati di partenza non è indicata nella fonte, o non in una sola",
    "scale_unstated": "(scala non indicata nella fonte)",
    "reason_part_exceeds_whole": (
        "il primo valore è maggiore del secondo, quindi non ne è una quota; indicare quale "
        "valore è il totale"
    ),
    "components_under": "{count} righe sono lette sotto '{heading}' nella tabella di {entity}",
    "components_of_total": (
        "{count} righe subito sopra {total} nella tabella di {entity} ne danno la somma"
    ),
    "components_rule": (
        "Righe: quelle lette sotto l'intestazione nominata, in ordine di tabella, fino alla riga "
        "che le totalizza; oppure, per una riga nominata, il minor numero di righe subito sopra "
        "che la sommano in ogni periodo memorizzato. Le righe non visibili non sono né elencate "
        "né contate."
    ),
    "start_to_end": (
        "Da quale cifra a quale? La domanda va dall'inizio di un periodo alla sua fine, e una "
        "variazione nel tempo confronta {metrics} con sé stesso tra periodi, non una cifra di "
        "apertura con una di chiusura. Chiedere per nome le righe di apertura e di chiusura, "
        "o la variazione della cifra di chiusura dall'anno prima."
    ),
    "opening_asked": (
        "All'inizio o alla fine? La domanda chiede una cifra all'inizio di un periodo, e le "
        "cifre registrate per {metrics} sono quelle di chiusura di ciascun periodo (o il suo "
        "flusso): il saldo di apertura di un anno è quello di chiusura dell'anno prima. "
        "Chiedere la fine dell'anno prima, o una riga indicata come saldo di apertura."
    ),
    "first_day_stored": (
        "All'inizio o alla fine? La cifra registrata per {metrics} in {periods} è stata letta "
        "da una colonna intestata al primo giorno di quell'anno, quindi è una cifra di "
        "apertura, non dell'anno. Chiederla a quel primo giorno, o alla fine dell'anno prima."
    ),
    "other_day_stored": (
        "Quale giorno? La cifra registrata per {metrics} in {periods} è stata letta a un altro "
        "giorno di quell'anno (lo indica la colonna o la riga della sua fonte), non al {asked}, "
        "il giorno indicato dalla domanda. Chiederla per {periods} per averla con la sua fonte "
        "e il suo giorno, o "
        "chiedere la cifra del {asked} a una fonte che la riporti."
    ),
    "count_negative": (
        "Come registrata o in valore assoluto? La domanda chiede un numero di elementi, che "
        "non è mai negativo, e {metric} è registrata negativa sopra, un segno che le dà la sua "
        "tabella (una diminuzione, un'uscita). La cifra è mostrata come registrata; il suo "
        "valore assoluto è il conteggio."
    ),
    "two_days_one_year": (
        "Quale giorno? La domanda indica {first} e {last}, due giorni di {period}, e le "
        "cifre registrate per un anno sono quelle dell'anno (alla sua fine, o lungo l'anno): "
        "i due giorni non si possono distinguere. Chiedere ciascuna cifra per il suo anno."
    ),
    "difference_of_metrics": (
        "In quale verso? Una differenza tra {first} e {second} non ha verso: {first} meno "
        "{second}, sopra, è negativa; come scarto tra i due, {second} supera {first} della "
        "stessa cifra senza il segno meno. Chiedere {second} meno {first} "
        "per avere lo scarto."
    ),
    "reason_negative_operand": (
        "un valore è memorizzato come importo negativo (la tabella può già sottrarlo); "
        "indicare quale segno si intende"
    ),
    "subtrahend_missing": (
        "La domanda sottrae un valore che non ha un fatto memorizzato: nessuna differenza "
        "viene indicata."
    ),
    "span_not_stored": (
        "Quali anni? La domanda nomina un arco di {span} anni ma non i suoi anni, e i periodi "
        "che prenderebbe sono {periods}. Indicare il primo e l'ultimo anno."
    ),
    "duration_not_stored": (
        "La domanda chiede una durata, e {metric} è memorizzato come importo: nessuna durata "
        "viene indicata."
    ),
    "change_backward": (
        "In quale verso? La domanda nomina {later} prima di {earlier}. Chiedere la variazione "
        "da {earlier} a {later}, oppure {earlier} rispetto a {later}."
    ),
    "change_from_only": (
        "Fino a quale periodo? La domanda nomina solo {period}, il periodo da cui parte la "
        "variazione. Chiedere la variazione da {period} a un periodo successivo."
    ),
    "change_nested": (
        "Quale calcolo? {inner} è parte di {outer}: una variazione, una somma o una media su "
        "entrambi conterebbe {inner} due volte o confronterebbe una parte con il suo intero. "
        "Chiedere ciascun valore, o periodi dello stesso tipo."
    ),
    "threshold_units": (
        "In quale scala è {threshold}? I valori di {metric} sono registrati in {scale}, e la "
        "domanda non indica una scala per {threshold}: chiedere di nuovo con la scala dopo il "
        "numero (come {scale})."
    ),
    "change_one_part": (
        "Da quale periodo? La domanda ne nomina uno, {period}, e una variazione in esso può "
        "partire dal periodo precedente o dallo stesso periodo dell'anno prima. Indicare "
        "entrambi i periodi."
    ),
    "average_one_part": (
        "Su quali periodi? La domanda ne nomina uno, {period}, e una media ne richiede "
        "diversi. Indicare il primo e l'ultimo periodo."
    ),
    "since_only": (
        "Fino a quale periodo? La domanda nomina solo {period}, il periodo da cui parte, e "
        "nessun valore del solo {period} risponde. Indicare il primo e l'ultimo anno."
    ),
    "assume_forward": (
        "Periodi: da {earlier} a {later} (la domanda nomina prima l'anno successivo; una "
        "variazione procede in avanti nel tempo)."
    ),
    "several_channels": (
        "Quale canale? La domanda ne nomina più d'uno ({channels}), e un calcolo si esegue qui "
        "sui valori di un solo canale. Chiederlo per ciascun canale a sé; i valori di ogni "
        "canale nominato si danno quando sono chiesti senza un calcolo."
    ),
    "assume_day_of_year": (
        "Giorno: {asked} è letto come {periods}, l'esercizio che lo contiene. Nel calendario "
        "di quest'area di lavoro {periods} termina in un altro giorno, e la cifra registrata "
        "per {metrics} in {periods} è registrata per anno, non a un giorno: è la cifra del "
        "{asked} solo se l'esercizio della sua fonte termina allora."
    ),
    "assume_early_year_end": (
        "Anni: un valore da una colonna datata gennaio o febbraio è dell'anno solare di quella "
        "data, come la intesta la fonte; molti retailer chiamano quell'anno con l'anno in cui "
        "inizia, un anno prima."
    ),
    "total_or_each": (
        "Ogni anno o la loro somma? {metric} è già un totale, e la domanda chiede un totale su "
        "più anni. Chiedere {metric} in ciascun anno, oppure la somma di {metric} su di essi."
    ),
    "two_operations": (
        "La domanda chiede due calcoli insieme ({words}): una risposta ne calcola uno. "
        "Chiederli uno alla volta."
    ),
    "crossed_periods": (
        "Quale anno per ciascun valore? La domanda indica un anno diverso per ogni valore del "
        "suo {word}, e una quota o un rapporto si calcola qui entro un solo anno. Chiedere "
        "entrambi i valori nello stesso anno, oppure ciascun valore a sé."
    ),
    "entities_and_periods": (
        "Cosa combinare? La domanda nomina più società ({entities}) e più periodi: chiedere "
        "ciascuna società sui periodi, oppure le società in un solo periodo."
    ),
    "crossed_entities": (
        "Quale società per ciascun valore? La domanda indica una società diversa per ogni "
        "valore del suo {word}, e una quota o un rapporto si calcola qui entro una sola "
        "società. Chiedere entrambi i valori della stessa società, oppure ciascun valore a sé."
    ),
    "one_figure_summed": (
        "La domanda chiede di sommare ({word}) ma nomina un solo valore: indicare ogni valore da "
        "sommare, oppure i periodi su cui sommarlo."
    ),
    "percent_not_stored": (
        "La domanda chiede una percentuale, e {metric} è memorizzato come importo, non come "
        "percentuale: nessuna percentuale viene indicata. Chiederla come quota di un altro "
        "valore (X in percentuale di Y)."
    ),
    "rounded": "arrotondato; esattamente {fraction}",
    "assume_entity_call": (
        "Entità: {entity} (la domanda non ne nomina una; l'entità indicata con la domanda)."
    ),
    "assume_entity_default": (
        "Entità: {entity} (la domanda non ne nomina una; l'entità predefinita dell'area di lavoro)."
    ),
    "assume_period_latest": (
        "Periodo: {period} (la domanda non ne nomina uno; l'ultimo periodo con un fatto "
        "memorizzato per {metric} di {entity})."
    ),
    "assume_undated": (
        "Periodo: nessuno indicato (la domanda non ne nomina uno, e {metric} di {entity} è "
        "memorizzato solo da un prospetto che non indica il periodo)."
    ),
    "undated_over_time": (
        "{metric}{channel} di {entity} è memorizzato solo da un prospetto che non indica il "
        "periodo: non se ne può calcolare una variazione, una media o una somma tra periodi."
    ),
    "undated_period": "prospetto senza data",
    "undated_mixed": (
        "Un valore senza data non ha un posto nel tempo: non si calcola una variazione, una "
        "media o una somma tra esso e un valore datato. Chiedere ogni valore, o solo periodi "
        "datati."
    ),
    "needs_metric": (
        "Quale metrica? La domanda non ne nomina una nota al glossario. Metriche note: {examples}."
    ),
    "needs_entity": (
        "Quale entità? La domanda non ne nomina una e non c'è un'entità predefinita (--entity, "
        "o default_entity in [answers] nel glossario). Entità note: {examples}."
    ),
    "needs_two_metrics": (
        "Quali due metriche? Una quota o un rapporto ne richiede due; la domanda ne nomina una "
        "({metric}). Metriche note: {examples}."
    ),
    "one_metric_select": (
        "Quale metrica? I periodi si scelgono dai valori di una metrica, e la domanda ne "
        "nomina diverse: {metrics}."
    ),
    "one_metric_only": (
        "Quale metrica? Una variazione, una media o una somma si calcola su una sola metrica, "
        "e la domanda ne nomina più d'una: {metrics}."
    ),
    "needs_two_items": (
        "Tra cosa? Una variazione richiede due periodi o due entità; la domanda ne nomina uno."
    ),
    "unrecognized": "RAGSpine non riconosce {param} {raw}.",
    "param_metric": "la metrica",
    "param_entity": "l'entità",
    "param_period": "il periodo",
    "param_channel": "il canale",
    "hint_close": " Valori noti simili: {values}.",
    "hint_periods": " I periodi si scrivono come {values}.",
    "contradiction": (
        "Il passaggio [{marker}] indica {numbers} per {metric} di {entity} nel {period}, diverso "
        "dal fatto memorizzato ({amount}): i dati usano solo il fatto memorizzato."
    ),
    "heading_figures": "Dati:",
    "heading_explanation": "Spiegazione:",
    "heading_assumptions": "Ipotesi:",
    "heading_flags": "Segnalazioni:",
    "heading_sources": "Fonti:",
    "percent": "per cento",
    "percentage_points": "punti percentuali",
    "thousand": "mila",
    "million": "milioni",
    "billion": "miliardi",
    "no_supported_answer": (
        "Nessuna risposta supportata: nessuna frase della risposta del modello cita una fonte "
        "fornita con i soli numeri che essa contiene. Le fonti fornite sono elencate sotto."
    ),
    "model_left_out": (
        "Alcune frasi della risposta del modello sono state omesse: non citavano una fonte "
        "fornita, o indicavano numeri assenti dai passaggi citati e dai fatti trovati."
    ),
    "model_cut_short": (
        "La risposta del modello si è interrotta; sono state lette solo le frasi complete."
    ),
}

TEXTS: Mapping[Locale, Mapping[str, str]] = {Locale.EN: _EN, Locale.IT: _IT}
"""Every fixed text by locale and key; each locale has the same keys (a test checks it)."""

assert tuple(locale.value for locale in Locale) == ANSWER_LOCALES

_CURRENCIES_IT = {
    "USD": "dollari USA",
    "EUR": "euro",
    "GBP": "sterline",
    "JPY": "yen",
    "CNY": "yuan",
    "CHF": "franchi svizzeri",
    "CAD": "dollari canadesi",
    "AUD": "dollari australiani",
    "INR": "rupie",
    "SEK": "corone svedesi",
}


def text(locale: Locale, key: str, **fields: object) -> str:
    """The fixed text ``key`` in ``locale`` with ``fields`` filled in."""
    return TEXTS[locale][key].format(**fields)


_SWAP = str.maketrans({",": ".", ".": ","})


def format_number(value: Decimal, locale: Locale) -> str:
    """``value`` with thousands separators, every stored digit kept, never in exponent form."""
    shown = format(value, ",f")
    return shown.translate(_SWAP) if locale is Locale.IT else shown


_MONTH_NAMES = {
    Locale.EN: (
        "January", "February", "March", "April", "May", "June",
        "July", "August", "September", "October", "November", "December",
    ),
    Locale.IT: (
        "gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno",
        "luglio", "agosto", "settembre", "ottobre", "novembre", "dicembre",
    ),
}  # fmt: skip


def format_day(day: date, locale: Locale) -> str:
    """``day`` as a reader writes it (``June 30, 2019``, ``30 giugno 2019``): its numbers are
    those a question or a table heading naming it says, never a ``06`` of an ISO date."""
    month = _MONTH_NAMES[locale][day.month - 1]
    if locale is Locale.IT:
        return f"{day.day} {month} {day.year}"
    return f"{month} {day.day}, {day.year}"


def format_exact(number: ExactNumber, locale: Locale, unit: str = "") -> str:
    """An exact result: its exact digits, or rounded to 2 places with the exact fraction said."""
    after = f" {unit}" if unit else ""
    exact = number.decimal
    if exact is not None:
        return format_number(exact.normalize(EXACT) if exact else Decimal(0), locale) + after
    rounded = format_number(number.rounded(TEXT_PLACES), locale)
    fraction = f"{number.value.numerator}/{number.value.denominator}"
    return f"{rounded}{after} ({text(locale, 'rounded', fraction=fraction)})"


def unit_words(
    unit: str, currency: str, scale: Scale | None, kind: MetricKind, locale: Locale
) -> str:
    """Scale, currency and unit spelled out (``million US dollars``, ``milioni dollari USA``)."""
    words = [] if scale in (None, Scale.ONE, Scale.UNKNOWN) else [text(locale, scale.value)]
    if kind is MetricKind.PERCENT or unit in {"%", "percent"}:
        words.append(text(locale, "percent"))
    elif currency:
        named = (
            _CURRENCIES_IT.get(currency.upper(), currency)
            if locale is Locale.IT
            else currency_name(currency)
        )
        words.append(named)
        if unit and unit.upper() != currency.upper():
            words.append(unit)
    elif unit:
        words.append(unit)
    if scale is Scale.UNKNOWN:
        words.append(text(locale, "scale_unstated"))
    return " ".join(words)


def format_amount(
    value: Decimal, unit: str, currency: str, scale: Scale, kind: MetricKind, locale: Locale
) -> str:
    """A stored value with its scale, currency and unit, in ``locale``."""
    words = unit_words(unit, currency, scale, kind, locale)
    number = format_number(value, locale)
    return f"{number} {words}" if words else number


def not_found(period_label: str, locale: Locale) -> str:
    """The fixed refusal of a lookup: no digit except those of the normalized period label."""
    if locale is Locale.EN:
        return not_found_text(period_label)
    shown = f"un {text(locale, 'undated_period')}" if period_label == UNDATED else period_label
    return (
        f"Nessun fatto memorizzato corrisponde a questa metrica, entità e canale per "
        f"{shown}, quindi non viene dato alcun valore."
    )
