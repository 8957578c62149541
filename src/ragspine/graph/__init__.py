"""The graph domain: relations between glossary terms and documents, roll-ups, comparisons and
derivations, called explicitly (never a hidden route of the channel router)."""
