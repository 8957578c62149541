"""Structured channel: facts, table ingestion and query_metric (store: ragspine.stores.facts)."""
