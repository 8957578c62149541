"""Stop lists, written for RAGSpine: the data of :mod:`ragspine.analysis`.

:data:`STOPWORDS` holds the index analyzer's list per Snowball language, stored already folded
(lower case without diacritics, because the index analyzer folds text before it checks them);
languages without a list here are stemmed without stopword removal. :data:`ROUTING_STOPWORDS` is
the shorter English list of the routing analyzer (:func:`ragspine.analysis.routing_terms`); the
two stay apart because routing profiles stored in workspaces were counted with it.
"""

from __future__ import annotations

_ENGLISH = """
a about above after again against all also am an and any are aren as at be because been before
being below between both but by can cannot could couldn d did didn do does doesn doing don down
during each few for from further had hadn has hasn have haven having he her here hers herself him
himself his how i if in into is isn it its itself just ll m me more most mustn my myself no nor not
now o of off on once only or other ought our ours ourselves out over own re s same shan she should
shouldn so some such t than that the their theirs them themselves then there these they this those
through to too under until up ve very was wasn we were weren what when where which while who whom
why will with won would wouldn you your yours yourself yourselves
"""

_FRENCH = """
a au aux avec ce ces c d dans de des du elle elles en et eux il ils j je l la le les leur leurs lui
m ma mais me meme mes moi mon n ne nos notre nous on ou par pas pour qu que qui s sa se ses son sur
t ta te tes toi ton tu un une vos votre vous y est sont ete etre avait
"""

_GERMAN = """
aber alle als also am an auch auf aus bei bin bis bist da dann das dass dem den der des die dies
diese dieser dieses doch dort du durch ein eine einem einen einer eines er es fur hat hatte ich ihr
ihre im in ist ja jede kann kein man mit muss nach nicht noch nur ob oder ohne sein sich sie sind so
uber um und uns unser von vor war waren was weil wenn werden wie wir wird zu zum zur
"""

_SPANISH = """
a al algo con de del el ella ellas ellos en entre era es esa ese eso esta este esto estos fue ha
han hay la las le les lo los mas me mi muy no nos o para pero por que se sin sobre su sus tambien
te tu un una uno unos y ya yo
"""

_ITALIAN = """
a ad al alla alle agli ai che chi con da dal dalla dei del della delle di e ed gli ha hanno i il in
io la le lei lo loro lui ma mi ne nei nel nella non o per piu quella quello questa questo se si sono
su sua sue suo suoi tra tu un una uno
"""

_PORTUGUESE = """
a ao aos as com como da das de do dos e ela ele eles em entre era essa esse esta este eu foi ha isso
mais mas na nas no nos o os ou para pela pelo por que se sem seu sua suas seus tambem um uma
"""

_DUTCH = """
aan al als bij dan dat de der deze die dit door een en er had heb hebben heeft het hij hoe ik in is
je kan maar met mij naar niet nog of om ook op over te tot uit van voor was wat we wel werd wie wij
worden zal ze zich zij zijn
"""

_ROUTING = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers him his how i if in into is it its itself just me more most my no
nor not now of off on once only or other our ours out over own same she should so some such than
that the their theirs them then there these they this those through to too under until up very
was we were what when where which while who whom why will with would you your yours
"""

STOPWORDS: dict[str, frozenset[str]] = {
    "english": frozenset(_ENGLISH.split()),
    "porter": frozenset(_ENGLISH.split()),
    "french": frozenset(_FRENCH.split()),
    "german": frozenset(_GERMAN.split()),
    "spanish": frozenset(_SPANISH.split()),
    "italian": frozenset(_ITALIAN.split()),
    "portuguese": frozenset(_PORTUGUESE.split()),
    "dutch": frozenset(_DUTCH.split()),
    "dutch_porter": frozenset(_DUTCH.split()),
}


ROUTING_STOPWORDS: frozenset[str] = frozenset(_ROUTING.split())
