"""Structured channel: facts, the fact store, table ingestion and query_metric."""
