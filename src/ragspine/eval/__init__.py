"""Evaluation: retrieval metrics over BEIR-style data and QA gates."""
