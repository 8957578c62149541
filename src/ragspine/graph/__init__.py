"""The graph domain: roll-ups over the glossary hierarchies, comparisons, derivation trees and
their pictures, read from stored facts, and the relation graph between glossary terms and
documents (an explicit surface, never a route of the router).

Kept free of imports: :mod:`ragspine.glossary` parses derivations with :mod:`ragspine.graph.expr`
and checks hierarchies with :mod:`ragspine.graph.hierarchy` while it loads.
"""
